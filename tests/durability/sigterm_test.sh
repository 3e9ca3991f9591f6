#!/usr/bin/env bash
# Graceful stop of the real binary: while the driver submits, SIGTERM the server and check that
# it exits with status 0 within the documented bound (--shutdown_grace_seconds plus one commit;
# asserted: grace + 2 s), logs event=draining then event=stopped, and that every acknowledged
# report is stored.
# Usage: sigterm_test.sh SERVER_BINARY DRIVER_BINARY
set -euo pipefail
. "$(dirname "$0")/../lib/server.sh"
server_bin=$1 driver_bin=$2
grace=3
work=$(mktemp -d)
server_pid= driver_pid=
cleanup() {
  [ -n "$driver_pid" ] && kill -9 "$driver_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
db=$work/deniable.db
"$server_bin" --listen=127.0.0.1:0 --db="$db" --shutdown_grace_seconds=$grace \
  >"$work/server.log" 2>&1 &
server_pid=$!
port=$(wait_for_port "$work/server.log" "$server_pid")
"$driver_bin" "127.0.0.1:$port" 1 >"$work/acked" 2>"$work/driver.log" &
driver_pid=$!
# SIGTERM once the driver has had a report acknowledged (a stop with nothing in flight would
# test nothing).
wait_until 30 test -s "$work/acked" ||
  { echo "FAIL: the driver had nothing acknowledged within 30 s"; cat "$work/driver.log"; exit 1; }
t0=$(date +%s%N)
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=
elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
wait "$driver_pid" || true; driver_pid=
echo "exit=$status elapsed_ms=$elapsed_ms acked=$(wc -l <"$work/acked")"
[ "$status" -eq 0 ] || { echo "FAIL: exit status $status"; cat "$work/server.log"; exit 1; }
[ "$elapsed_ms" -le $(( (grace + 2) * 1000 )) ] || { echo "FAIL: took ${elapsed_ms} ms"; exit 1; }
grep -q 'event=draining' "$work/server.log" || { echo "FAIL: no event=draining"; exit 1; }
grep -q 'event=stopped' "$work/server.log" || { echo "FAIL: no event=stopped"; exit 1; }
[ -s "$work/acked" ] || { echo "FAIL: nothing was acknowledged before the stop"; exit 1; }
missing=$(sqlite3 "$db" <<SQL
$(stored_reports_sql "$db")
CREATE TEMP TABLE acked(id TEXT PRIMARY KEY);
.mode csv
.import $work/acked acked
.mode list
SELECT count(*) FROM acked WHERE id NOT IN (SELECT lower(hex(report_id)) FROM stored_reports);
SQL
)
[ "$missing" = 0 ] || { echo "FAIL: $missing acknowledged reports are not stored"; exit 1; }
echo "sigterm: OK"
