#!/usr/bin/env bash
# The backup and restore recipe of docs/docker.md, without Docker (issue 37 item 5): the same
# commands against a local server on a "volume" directory. While a client submits and the server
# moves reports into its keyed file (--max_recent_reports=500), `deniable-server backup` writes
# backup.db and backup.db-reports; both are copied off the volume ("docker cp") and removed; the
# server is stopped; `deniable-server restore` puts them back (the old pair moved aside); the
# restarted server serves every report acknowledged before the backup, with counts equal to its
# stored reports. The old recipe (backup.db alone) is refused by name.
# Usage: restore_recipe_test.sh SERVER_BINARY DRIVER_BINARY CLI_BINARY
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
vol=$work/volume host=$work/host
mkdir -p "$vol" "$host"
"$server_bin" --listen=127.0.0.1:0 --db="$vol/deniable.db" --max_recent_reports=500 \
  --access_log=false >server.log 2>&1 &
server_pid=$!
port=$(wait_for_port server.log "$server_pid")
"$driver_bin" "127.0.0.1:$port" 1 >acked 2>driver.log &
driver_pid=$!
acked_at_least() { [ "$(wc -l <acked)" -ge "$1" ]; }
wait_until 20 acked_at_least 5000
cp acked acked_before  # acknowledged before the backup starts

# docs/docker.md "Backup": backup, copy both files off the volume, remove them there.
"$server_bin" backup --db="$vol/deniable.db" --out="$vol/backup.db" >backup.txt
cat backup.txt
grep -q "counts = stored reports" backup.txt
cp "$vol/backup.db" "$host/backup.db"
cp "$vol/backup.db-reports" "$host/backup.db-reports"
rm "$vol/backup.db" "$vol/backup.db-reports"
wait_until 20 acked_at_least $(( $(wc -l <acked_before) + 1 ))  # still acknowledging

# docs/docker.md "Restore": stop, restore, start.
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=
wait "$driver_pid" || true; driver_pid=
"$server_bin" restore --from="$host/backup.db" --db="$vol/deniable.db" >restore.txt
cat restore.txt
grep -q "verified (integrity_check ok, counts = stored reports" restore.txt
aside=$(ls -d "$vol"/deniable.db.before-restore-* | grep -v -e '-wal$' -e '-shm$' -e '-reports' | head -n1)
[ -e "$aside" ] && [ -e "$aside-reports" ] || { echo "FAIL: the old pair was not moved aside"; ls "$vol"; exit 1; }
[ ! -e "$vol/deniable.db.partial" ] || { echo "FAIL: deniable.db.partial left behind"; exit 1; }
"$server_bin" --listen=127.0.0.1:0 --db="$vol/deniable.db" --access_log=false >restored.log 2>&1 &
server_pid=$!
port=$(wait_for_port restored.log "$server_pid")
"$cli_bin" --target="127.0.0.1:$port" prevalence --metric=kill --json >prevalence.json
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=
n=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["n"]))' prevalence.json)
before=$(wc -l <acked_before)
[ "$n" -ge "$before" ] || { echo "FAIL: the restored server serves n=$n < $before acknowledged"; exit 1; }

# Every report acknowledged before the backup is stored once, and counts = stored reports.
read -r missing stored counted < <(sqlite3 -separator ' ' "$vol/deniable.db" <<SQL
$(stored_reports_sql "$vol/deniable.db")
CREATE TEMP TABLE acked(id TEXT PRIMARY KEY);
.mode csv
.import $work/acked_before acked
.mode list
.separator ' '
SELECT (SELECT count(*) FROM acked WHERE id NOT IN (SELECT lower(hex(report_id)) FROM stored_reports)),
       (SELECT count(*) FROM stored_reports), (SELECT coalesce(sum(n), 0) FROM counts);
SQL
)
[ "$missing" = 0 ] || { echo "FAIL: $missing reports acknowledged before the backup are missing"; exit 1; }
[ "$stored" = "$counted" ] || { echo "FAIL: restored: $stored stored reports, counts $counted"; exit 1; }
grep -q "reports $stored, count rows" backup.txt || { echo "FAIL: backup.txt does not say reports $stored"; exit 1; }
echo "acknowledged before the backup: $before; restored: $stored stored = $counted counted; served n=$n"

# The old recipe: backup.db alone. restore names the missing file; a server on it refuses.
mkdir old
cp "$host/backup.db" old/backup.db
set +e
"$server_bin" restore --from=old/backup.db --db=old/deniable.db >out.txt 2>&1; rc=$?
[ "$rc" = 1 ] && grep -q "backup.db-reports\" does not exist" out.txt || { echo "FAIL: restore of backup.db alone: $rc"; cat out.txt; exit 1; }
[ ! -e old/deniable.db ] || { echo "FAIL: a refused restore left old/deniable.db"; exit 1; }
# A running server's database is not restored over.
"$server_bin" --listen=127.0.0.1:0 --db="$vol/deniable.db" --access_log=false >again.log 2>&1 &
server_pid=$!
wait_for_port again.log "$server_pid" >/dev/null
"$server_bin" restore --from="$host/backup.db" --db="$vol/deniable.db" >out.txt 2>&1; rc=$?
[ "$rc" = 1 ] && grep -q "in use" out.txt || { echo "FAIL: restore over a running server: $rc"; cat out.txt; exit 1; }
set -e
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=
echo "restore recipe: OK"
