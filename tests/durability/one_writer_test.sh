#!/usr/bin/env bash
# One writer per database: a second deniable-server on the same database file, under the same
# name or another (hard link, symlink, path spelling, bind mount), must refuse to
# start (exit non-zero, a message naming the database and the holder's pid) while the first one
# keeps serving; once the first is SIGKILLed, the kernel has released its lock and a new server
# starts on the same file.
# Usage: one_writer_test.sh SERVER_BINARY
set -euo pipefail
. "$(dirname "$0")/../lib/server.sh"
server_bin=$1
work=$(mktemp -d)
first= third=
cleanup() {
  [ -n "$first" ] && kill -9 "$first" 2>/dev/null || true
  [ -n "$third" ] && kill -9 "$third" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
db=$work/deniable.db
"$server_bin" --listen=127.0.0.1:0 --db="$db" >"$work/first.log" 2>&1 &
first=$!
wait_for_port "$work/first.log" "$first" >/dev/null

status=0
timeout 20 "$server_bin" --listen=127.0.0.1:0 --db="$db" >"$work/second.log" 2>&1 || status=$?
echo "second server: exit=$status: $(tr '\n' ' ' <"$work/second.log")"
[ "$status" -ne 0 ] || { echo "FAIL: the second server started"; exit 1; }
[ "$status" -ne 124 ] || { echo "FAIL: the second server kept running"; exit 1; }
grep -qF "$db" "$work/second.log" || { echo "FAIL: the message does not name $db"; exit 1; }
grep -q "pid $first" "$work/second.log" || { echo "FAIL: the message does not name pid $first"; exit 1; }
if grep -q 'event=start' "$work/second.log"; then echo "FAIL: the second server listened"; exit 1; fi
kill -0 "$first" || { echo "FAIL: the first server died"; cat "$work/first.log"; exit 1; }

# The lock is on the file, not on its name: the same refusal through a hard link, a symlink,
# another spelling of the path and (as root, in a private mount namespace) a bind mount.
mkdir "$work/other" "$work/bind"
ln "$db" "$work/other/hard.db"
ln -s "$db" "$work/other/soft.db"
refused() {  # NAME COMMAND...: the command (a second server) must exit non-zero naming pid $first
  local name=$1 rc=0
  shift
  timeout 20 "$@" >"$work/$name.log" 2>&1 || rc=$?
  echo "$name: exit=$rc: $(tr '\n' ' ' <"$work/$name.log")"
  [ "$rc" -ne 0 ] || { echo "FAIL: a second server started through $name"; exit 1; }
  [ "$rc" -ne 124 ] || { echo "FAIL: a second server kept running through $name"; exit 1; }
  grep -q "pid $first" "$work/$name.log" || { echo "FAIL: $name: no pid $first"; exit 1; }
}
refused hard_link "$server_bin" --listen=127.0.0.1:0 --db="$work/other/hard.db"
refused symlink "$server_bin" --listen=127.0.0.1:0 --db="$work/other/soft.db"
refused spelling "$server_bin" --listen=127.0.0.1:0 --db="$work/other/../deniable.db"
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  refused bind_mount unshare -m sh -c 'mount --bind "$1" "$2" && exec "$3" --listen=127.0.0.1:0 --db="$2/deniable.db"' \
    sh "$work" "$work/bind" "$server_bin"
else
  echo "bind mount: not tried (needs root and unshare -m; the lock is on the inode, as for the hard link)"
fi
kill -0 "$first" || { echo "FAIL: the first server died"; cat "$work/first.log"; exit 1; }

kill -9 "$first"
wait "$first" 2>/dev/null || true
first=
"$server_bin" --listen=127.0.0.1:0 --db="$db" >"$work/third.log" 2>&1 &
third=$!
wait_for_port "$work/third.log" "$third" >/dev/null
echo "one writer: OK"
