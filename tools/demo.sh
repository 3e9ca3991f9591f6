#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install what is missing, build, start the collector
# on a new SQLite database, replay the 1988 Chile plebiscite survey through the client SDK (one
# simulated device per respondent, "will you vote Yes?"), and print the server's debiased
# estimate and 95 % interval next to the true share (868 / 2532 = 34.28 %).
#
# Environment: DENIABLE_DEMO_PORT (default 50051), DENIABLE_DEMO_KEEP=1 keeps the server running.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DENIABLE_BUILD_DIR:-$root/build}
port=${DENIABLE_DEMO_PORT:-50051}
bash "$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null
cmake --build "$build" -j"$(nproc)" --target deniable-server deniable

demo=$build/demo
mkdir -p "$demo"
rm -f "$demo"/deniable.db*
"$build/server/deniable-server" --listen="127.0.0.1:$port" --db="$demo/deniable.db" \
  >"$demo/server.log" 2>&1 &
server_pid=$!
if [ "${DENIABLE_DEMO_KEEP:-0}" != 1 ]; then
  trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true' EXIT
fi
cli=("$build/tools/deniable" --target="127.0.0.1:$port")
for _ in $(seq 50); do "${cli[@]}" health >/dev/null 2>&1 && break; sleep 0.2; done
"${cli[@]}" health >/dev/null || { echo "the server did not start:"; cat "$demo/server.log"; exit 1; }

echo "== collector listening on 127.0.0.1:$port, database $demo/deniable.db"
echo
echo "== deniable create-metric (two-coin randomized response, epsilon = ln 3)"
"${cli[@]}" create-metric --name=chile_vote_yes --design=two_coin \
  --description="Will you vote Yes (for Pinochet) in the 1988 plebiscite?"
echo
echo "== deniable replay: 2532 respondents, each randomizes its own answer on the device;"
echo "   the region (C, M, N, S, SA) travels as a public label"
"${cli[@]}" replay --metric=chile_vote_yes --csv="$root/tests/data/chile-plebiscite-1988.csv" \
  --column=vote --yes=Y --label_columns=region --group_by=region
if [ "${DENIABLE_DEMO_KEEP:-0}" = 1 ]; then
  echo; echo "server left running (pid $server_pid); query it with: ${cli[*]} prevalence --metric=chile_vote_yes"
fi
