#!/usr/bin/env bash
# Online backup (issue 17): while a client submits reports to the real server, `deniable-server
# backup` copies its database (read-only: the server keeps the one-writer lock and keeps
# acknowledging); the copy holds every report acknowledged before the backup started, opens with
# the server, and serves a prevalence over at least those reports. Refusals: an existing --out
# (exit 2, untouched), a PostgreSQL URI (exit 2, names pg_dump), a file that is no collector
# database (exit 1, no copy left behind).
# Usage: backup_test.sh SERVER_BINARY DRIVER_BINARY CLI_BINARY
set -euo pipefail
. "$(dirname "$0")/../lib/server.sh"
server_bin=$1 driver_bin=$2 cli_bin=$3
work=$(mktemp -d)
server_pid= driver_pid=
cleanup() {
  [ -n "$driver_pid" ] && kill -9 "$driver_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
"$server_bin" --listen=127.0.0.1:0 --db=deniable.db --access_log=false >server.log 2>&1 &
server_pid=$!
port=$(wait_for_port server.log "$server_pid")
"$driver_bin" "127.0.0.1:$port" 1 >acked 2>driver.log &
driver_pid=$!
for _ in $(seq 200); do [ "$(wc -l <acked)" -ge 2000 ] && break; sleep 0.05; done
cp acked acked_before  # acknowledged before the backup starts
"$server_bin" backup --db=deniable.db --out=copy.db >backup.txt
cat backup.txt
grep -q "verified (integrity_check ok, counts = stored reports" backup.txt
kill -0 "$server_pid"  # still running
before=$(wc -l <acked_before)
acked_more() { [ "$(wc -l <acked)" -gt "$before" ]; }
wait_until 10 acked_more || { echo "FAIL: the server acknowledged nothing after the backup"; exit 1; }
after=$(wc -l <acked)
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=
wait "$driver_pid" || true; driver_pid=
[ ! -e copy.db.partial ] && [ ! -e copy.db.partial-reports ] || { echo "FAIL: copy.db.partial left behind"; exit 1; }
[ -e copy.db-reports ] || { echo "FAIL: no copy.db-reports beside copy.db"; exit 1; }

# Every report acknowledged before the backup started is in the copy.
missing=$(sqlite3 copy.db <<SQL
$(stored_reports_sql copy.db)
CREATE TEMP TABLE acked(id TEXT PRIMARY KEY);
.mode csv
.import $work/acked_before acked
.mode list
SELECT count(*) FROM acked WHERE id NOT IN (SELECT lower(hex(report_id)) FROM stored_reports);
SQL
)
[ "$missing" = 0 ] || { echo "FAIL: $missing reports acknowledged before the backup are missing"; exit 1; }

# The copy opens with the server (restore = use the file) and serves them.
"$server_bin" --listen=127.0.0.1:0 --db=copy.db >restored.log 2>&1 &
server_pid=$!
port=$(wait_for_port restored.log "$server_pid")
"$cli_bin" --target="127.0.0.1:$port" prevalence --metric=kill --json >prevalence.json
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=
n=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["n"]))' prevalence.json)
[ "$n" -ge "$before" ] || { echo "FAIL: the restored copy serves n=$n < $before acknowledged"; exit 1; }
echo "acknowledged before the backup: $before, after: $after, served from the copy: n=$n"

# Refusals.
set +e
"$server_bin" backup --db=deniable.db --out=copy.db >out.txt 2>&1; rc=$?
[ "$rc" = 2 ] && grep -q "already exists" out.txt || { echo "FAIL: existing --out: $rc"; cat out.txt; exit 1; }
"$server_bin" backup --db=postgresql://u@127.0.0.1/x --out=pg.db >out.txt 2>&1; rc=$?
[ "$rc" = 2 ] && grep -q "pg_dump" out.txt || { echo "FAIL: PostgreSQL URI: $rc"; cat out.txt; exit 1; }
sqlite3 other.db "CREATE TABLE t(x); PRAGMA application_id=7;"
"$server_bin" backup --db=other.db --out=other-copy.db >out.txt 2>&1; rc=$?
[ "$rc" = 1 ] && grep -q "not a collector database" out.txt || { echo "FAIL: foreign db: $rc"; cat out.txt; exit 1; }
set -e
[ ! -e other-copy.db ] && [ ! -e other-copy.db.partial ]
echo "backup: OK"
