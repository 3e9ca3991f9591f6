#!/usr/bin/env bash
# Durability under SIGKILL: ITERATIONS times (default 50), start the real deniable-server on the
# same database (alternating synchronous=FULL and NORMAL; two starts in three with a recent limit
# of 2000, so that moves into the keyed reports file run), let the driver submit batches, kill -9
# the server at a random moment (20-400 ms), restart. Then check on the database:
#   every acknowledged report id is stored; sum(counts.n) = count(*) of reports;
#   PRAGMA integrity_check = ok.
# Bounded: about 0.5 s per iteration; on a loaded machine it stops early after 80 s, once at
# least 10 kills are done (the time is a budget, not an assertion; CTest's timeout catches hangs).
# Usage: kill9_test.sh SERVER_BINARY DRIVER_BINARY [ITERATIONS]
set -euo pipefail
. "$(dirname "$0")/../lib/server.sh"
server_bin=$1 driver_bin=$2 iterations=${3:-50}
work=$(mktemp -d)
server_pid= driver_pid= done_iterations=0
cleanup() {
  [ -n "$driver_pid" ] && kill -9 "$driver_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
start=$(date +%s)
db=$work/deniable.db
for i in $(seq 1 "$iterations"); do
  durability=full; [ $((i % 2)) -eq 0 ] && durability=normal
  # Two starts in three move metric-hours into the keyed reports file all the time (a small
  # recent limit), so kills land in moves too: across the two files, every report stays once.
  recent=4000000; [ $((i % 3)) -ne 0 ] && recent=2000
  "$server_bin" --listen=127.0.0.1:0 --db="$db" --durability=$durability \
    --max_recent_reports=$recent >"$work/server.log" 2>&1 &
  server_pid=$!
  port=$(wait_for_port "$work/server.log" "$server_pid")
  "$driver_bin" "127.0.0.1:$port" "$i" >"$work/acked.$i" 2>"$work/driver.$i.log" &
  driver_pid=$!
  sleep "0.$(printf '%03d' $((20 + RANDOM % 380)))"
  kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
  # The driver flushes each acknowledged batch's ids as soon as it is acknowledged, so killing
  # it loses no acknowledgement; waiting for it cost up to 5 s (its wait-for-ready deadline)
  # whenever the kill landed before its first call, which pushed the test past its time bound.
  kill -9 "$driver_pid" 2>/dev/null || true; wait "$driver_pid" 2>/dev/null || true; driver_pid=
  done_iterations=$i
  if [ "$i" -ge 10 ] && [ $(( $(date +%s) - start )) -gt 80 ]; then
    echo "time budget spent after $i of $iterations kills"; break
  fi
done
# Whole ids only: a kill may cut the driver's last line short.
cat "$work"/acked.* | grep -E '^[0-9a-f]{32}$' >"$work/acked" || true
acked=$(wc -l <"$work/acked")
[ "$acked" -gt 0 ] || { echo "no batch was acknowledged"; exit 1; }
result=$(sqlite3 "$db" <<SQL
$(stored_reports_sql "$db")
CREATE TEMP TABLE acked(id TEXT PRIMARY KEY);
.mode csv
.import $work/acked acked
.mode list
SELECT 'missing=' || count(*) FROM acked WHERE id NOT IN (SELECT lower(hex(report_id)) FROM stored_reports);
SELECT 'reports=' || count(*) FROM stored_reports;
SELECT 'counted=' || (SELECT coalesce(sum(n), 0) FROM counts);
SELECT 'keyed=' || count(*) FROM keyed.reports;
SELECT 'integrity=' || group_concat(integrity_check) FROM pragma_integrity_check;
SQL
)
echo "$result" | tr '\n' ' '; echo "acked=$acked iterations=$done_iterations seconds=$(( $(date +%s) - start ))"
missing=$(echo "$result" | sed -n 's/^missing=//p')
reports=$(echo "$result" | sed -n 's/^reports=//p')
counted=$(echo "$result" | sed -n 's/^counted=//p')
integrity=$(echo "$result" | sed -n 's/^integrity=//p')
keyed=$(echo "$result" | sed -n 's/^keyed=//p')
[ "$missing" = 0 ] || { echo "FAIL: $missing acknowledged reports are not stored"; exit 1; }
[ "$reports" = "$counted" ] || { echo "FAIL: counts say $counted, reports table has $reports"; exit 1; }
[ "$integrity" = ok ] || { echo "FAIL: integrity_check: $integrity"; exit 1; }
[ "$reports" -ge "$acked" ] || { echo "FAIL: fewer reports than acknowledged"; exit 1; }
[ "$keyed" -gt 0 ] || { echo "FAIL: no report moved into the keyed file (no move ran)"; exit 1; }
echo "kill9: OK"
