#!/usr/bin/env bash
# A collector whose port is taken exits 1 with a message naming the address and "address in use"
# (not only gRPC's status dump), for --listen and --http_listen, also when the port is another
# collector's (gRPC's SO_REUSEPORT is off); tools/demo.sh then says "address in use" and names
# the port instead of "the server did not start" and the whole log (issue 38).
# Usage: listen_in_use_test.sh SERVER_BINARY CLI_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/server.sh"
server_bin=$1 cli_bin=$2
enter_work_dir
holder_pid=
trap 'for p in $holder_pid $server_pid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# Another program holds a port (a plain listening socket, no SO_REUSEPORT).
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)' "$work/held_port" &
holder_pid=$!
wait_until 10 test -s "$work/held_port"
held=$(cat "$work/held_port")

expect_in_use() {  # expect_in_use LOG FLAG ADDRESS RC: the run exited 1 naming FLAG, ADDRESS, the cause
  local log=$1 flag=$2 address=$3 rc=$4
  if [ "$rc" != 1 ]; then echo "exit code $rc, want 1:"; cat "$log"; exit 1; fi
  grep -q "$flag: cannot listen on \"$address\": address in use: another process listens on port ${address##*:}" "$log" ||
    { echo "no \"address in use\" message for $flag $address:"; cat "$log"; exit 1; }
}

rc=0
timeout 20 "$server_bin" --listen="127.0.0.1:$held" --db="$work/a.db" >"$work/grpc.log" 2>&1 || rc=$?
expect_in_use "$work/grpc.log" listen_address "127.0.0.1:$held" "$rc"

rc=0
timeout 20 "$server_bin" --listen=127.0.0.1:0 --http_listen="127.0.0.1:$held" --db="$work/b.db" \
  >"$work/http.log" 2>&1 || rc=$?
expect_in_use "$work/http.log" http_listen "127.0.0.1:$held" "$rc"

# A second collector on a running collector's port does not share it (with gRPC's SO_REUSEPORT it
# started and served beside the first; `timeout` ends such a run: exit 124).
"$server_bin" --listen=127.0.0.1:0 --db="$work/c.db" >"$work/first.log" 2>&1 &
server_pid=$!
first=$(wait_for_port "$work/first.log" "$server_pid")
rc=0
timeout 20 "$server_bin" --listen="127.0.0.1:$first" --db="$work/d.db" >"$work/second.log" 2>&1 || rc=$?
expect_in_use "$work/second.log" listen_address "127.0.0.1:$first" "$rc"

# The demo on the taken port.
rc=0
DENIABLE_DEMO_SERVER=$server_bin DENIABLE_DEMO_CLI=$cli_bin DENIABLE_DEMO_PORT=$held \
  DENIABLE_DEMO_DIR="$work/demo" bash "$here/../tools/demo.sh" >"$work/demo.txt" 2>&1 || rc=$?
cat "$work/demo.txt"
[ "$rc" = 1 ] || { echo "demo exit code $rc, want 1"; exit 1; }
grep -q "port $held: address in use" "$work/demo.txt" || { echo "demo: no \"address in use\""; exit 1; }
if grep -q 'grpc' "$work/demo.txt"; then echo "demo: printed gRPC's log"; exit 1; fi
echo "ok"
