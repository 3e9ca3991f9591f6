#!/usr/bin/env bash
# Structured logs and configuration (issue 17): with --log_format=json every line the real server
# writes, its own and gRPC's, is one JSON object (time, level, msg) with the values escaped;
# --log_level filters; a bad value is a usage error (exit 2); every flag is also read from
# DENIABLE_<FLAG>, and the command line wins over the environment. Issue 29: the key=value pairs
# are JSON fields (numbers as numbers) and msg holds no pair; no banner of stars; gRPC's internal
# lines only at debug (none at the default level, in JSON or text).
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
python3 - server.log "$port" <<'PY'
import json, re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert lines, "no log lines"
levels = set()
entries = []
for line in lines:
    entry = json.loads(line)  # raises on any line that is not one JSON object
    assert {"time", "level", "msg"} <= set(entry), entry
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["time"]), entry
    levels.add(entry["level"])
    entries.append(entry)
    # The pairs are fields: msg holds none of them, and no record is a banner of stars.
    assert not re.search(r"(^| )[a-z_][a-z0-9_]*=", entry["msg"]), entry
    assert "**" not in entry["msg"], entry
events = {e.get("event"): e for e in entries}
start = events["start"]
assert start["port"] == int(sys.argv[2]) and start["tls"] == "off", start  # a number, a string
assert start["listen"] == "127.0.0.1:0" and start["db"] == "deniable.db", start
assert "stopped" in events and "draining" in events, sorted(e for e in events if e)
access = [e for e in entries if e.get("event") == "access"]
assert any(e["method"] == "deniable.v1.QueryService/CreateMetric" and e["code"] == "OK" and
           isinstance(e["latency_ms"], float) for e in access), access
created = events["metric_created"]
assert created["metric"] == "ok_metric" and created["design_version"] == 1, created
# gRPC's own lines: at debug (the level of this run), never info.
grpc = [e for e in entries if e["msg"].startswith("grpc: ")]
assert grpc and all(e["level"] in ("debug", "trace", "error") for e in grpc), grpc
assert any(e["level"] == "debug" for e in grpc), grpc
assert "warning" in levels, levels
print(f"{len(lines)} JSON lines, levels {sorted(levels)}, {len(grpc)} of gRPC")
PY

# The default level: no gRPC internals (epoll fd, IPv6 probing), in JSON and in text; the text
# format keeps its banner.
for format in json text; do
  "$server_bin" --listen=127.0.0.1:0 --db=deniable.db --log_format=$format >default.log 2>&1 &
  server_pid=$!
  port=$(wait_for_port default.log "$server_pid")
  "$cli_bin" --target="127.0.0.1:$port" health >/dev/null
  kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=
  if grep -q "grpc: " default.log; then echo "gRPC lines at the default level:"; cat default.log; exit 1; fi
  grep -q "grpc.health.v1.Health/Check" default.log  # the access line: info is on
  if [ $format = text ]; then
    grep -q '\*\* INSECURE: plaintext' default.log
  else
    if grep -q '\*\*' default.log; then echo "a banner in JSON logs:"; cat default.log; exit 1; fi
  fi
done
echo "json logs: OK"
