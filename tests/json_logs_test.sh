#!/usr/bin/env bash
# Structured logs and configuration (issue 17): with --log_format=json every line the real server
# writes, its own and gRPC's, is one JSON object (time, level, msg) with the values escaped;
# --log_level filters; a bad value is a usage error (exit 2); every flag is also read from
# DENIABLE_<FLAG>, and the command line wins over the environment.
# Usage: json_logs_test.sh SERVER_BINARY CLI_BINARY
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
server_bin=$1 cli_bin=$2
enter_work_dir
set +e; "$server_bin" --log_level=loud --db=x.db >err.txt 2>&1; rc=$?; set -e
[ "$rc" = 2 ] || { echo "--log_level=loud: exit $rc"; cat err.txt; exit 1; }
grep -q -- "--log_level must be" err.txt
# Every flag also from DENIABLE_<FLAG>: a bad value there is a usage error naming the variable.
set +e; DENIABLE_MAX_BATCH_REPORTS=many "$server_bin" --db=x.db >err.txt 2>&1; rc=$?; set -e
[ "$rc" = 2 ] && grep -q "DENIABLE_MAX_BATCH_REPORTS (for --max_batch_reports)" err.txt \
  || { echo "DENIABLE_MAX_BATCH_REPORTS=many: exit $rc"; cat err.txt; exit 1; }

# The format from the environment, the level from the command line, which wins over the
# environment's bad value.
DENIABLE_LOG_FORMAT=json DENIABLE_LOG_LEVEL=loud "$server_bin" --listen=127.0.0.1:0 \
  --db=deniable.db --log_level=debug >server.log 2>&1 &
server_pid=$!
port=$(wait_for_port server.log "$server_pid")
cli=("$cli_bin" --target="127.0.0.1:$port")
"${cli[@]}" health >/dev/null
# A hostile name (quotes, backslash, newline) reaches the log through a rejected call.
"${cli[@]}" create-metric --name="$(printf 'bad"name\\\nx')" --design=two_coin >/dev/null 2>&1 || true
"${cli[@]}" create-metric --name=ok_metric --design=two_coin >/dev/null
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=
python3 - server.log <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert lines, "no log lines"
levels = set()
for line in lines:
    entry = json.loads(line)  # raises on any line that is not one JSON object
    assert set(entry) == {"time", "level", "msg"}, entry
    levels.add(entry["level"])
msgs = [json.loads(l)["msg"] for l in lines]
assert any("event=start" in m for m in msgs), msgs
assert any("event=stopped" in m for m in msgs), msgs
assert "warning" in levels, levels
print(f"{len(lines)} JSON lines, levels {sorted(levels)}")
PY
echo "json logs: OK"
