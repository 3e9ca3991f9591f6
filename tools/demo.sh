#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install what is missing, build, start the collector
# on a new SQLite database, replay the 1988 Chile plebiscite survey through the client SDK (one
# simulated device per respondent) and print the server's debiased estimates beside the truth:
#   1. the yes/no question "will you vote Yes?" (two-coin design): estimate and 95 % interval
#      next to the true share (868 / 2532 = 34.28 %);
#   2. the four-answer vote itself (Y yes, N no, U undecided, A abstain; k-RR at epsilon = ln 3):
#      each share's estimate and 95 % simultaneous interval next to its true share;
#   3. numbers: the respondents' age (years) and monthly income (pesos), each device sending one
#      1BitMean bit at epsilon = ln 3: the mean and its 95 % interval next to the true mean;
#      then the income histogram (dBitFlip, 7 buckets, epsilon = ln 3): each bucket's share with
#      95 % simultaneous intervals next to the true shares, and the median with its interval.
#      Respondents with a blank age (1) or income (83) are left out (--blank=skip).
#
# Environment: DENIABLE_DEMO_PORT (default 50051; 0 picks a free port), DENIABLE_DEMO_KEEP=1
# keeps the server running, DENIABLE_DEMO_DIR (default BUILD/demo) holds the database and the
# server's log. DENIABLE_DEMO_SERVER and DENIABLE_DEMO_CLI name binaries already built: then
# nothing is installed or built (tests/demo_test.sh runs the demo this way).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DENIABLE_BUILD_DIR:-$root/build}
port=${DENIABLE_DEMO_PORT:-50051}
server_bin=${DENIABLE_DEMO_SERVER:-}
cli_bin=${DENIABLE_DEMO_CLI:-}
if [ -z "$server_bin" ] || [ -z "$cli_bin" ]; then
  bash "$root/tools/install-deps.sh"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null
  cmake --build "$build" -j"$(nproc)" --target deniable-server deniable
  server_bin=$build/server/deniable-server
  cli_bin=$build/tools/deniable
fi
csv=$root/tests/data/chile-plebiscite-1988.csv

demo=${DENIABLE_DEMO_DIR:-$build/demo}
mkdir -p "$demo"
rm -f "$demo"/deniable.db*
"$server_bin" --listen="127.0.0.1:$port" --db="$demo/deniable.db" >"$demo/server.log" 2>&1 &
server_pid=$!
if [ "${DENIABLE_DEMO_KEEP:-0}" != 1 ]; then
  trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true' EXIT
fi
if [ "$port" = 0 ]; then
  . "$root/tests/lib/server.sh"
  port=$(wait_for_port "$demo/server.log" "$server_pid")
fi
cli=("$cli_bin" --target="127.0.0.1:$port")
for _ in $(seq 50); do
  kill -0 "$server_pid" 2>/dev/null || break  # exited: never ask another process on the port
  "${cli[@]}" health >/dev/null 2>&1 && break
  sleep 0.2
done
if ! kill -0 "$server_pid" 2>/dev/null; then
  # The server's own "cannot start" line names the cause (e.g. "address in use"), not gRPC's.
  echo "the server did not start on 127.0.0.1:$port:" >&2
  grep -m1 'cannot start' "$demo/server.log" >&2 || cat "$demo/server.log" >&2
  if grep -q 'address in use' "$demo/server.log"; then
    echo "port $port: address in use; set DENIABLE_DEMO_PORT to a free port (0 picks one)" >&2
  fi
  exit 1
fi
"${cli[@]}" health >/dev/null || { echo "the server did not answer:"; cat "$demo/server.log"; exit 1; }

echo "== collector listening on 127.0.0.1:$port, database $demo/deniable.db"
echo
echo "== deniable create-metric (two-coin randomized response, epsilon = ln 3), asked once per"
echo "   device (a survey: every selection counts independent respondents)"
"${cli[@]}" create-metric --name=chile_vote_yes --design=two_coin --reporting_period=once \
  --description="Will you vote Yes (for Pinochet) in the 1988 plebiscite?"
echo
echo "== deniable replay: 2532 respondents, each randomizes its own answer on the device;"
echo "   the region (C, M, N, S, SA) travels as a public label"
"${cli[@]}" replay --metric=chile_vote_yes --csv="$csv" \
  --column=vote --yes=Y --label_columns=region --group_by=region
echo
echo "== deniable create-metric with 4 categories (Y yes, N no, U undecided, A abstain), epsilon"
echo "   = ln 3; --design=categorical lets the server pick the mechanism of least variance"
"${cli[@]}" create-metric --name=chile_vote --categories=Y,N,U,A --design=categorical \
  --epsilon=1.0986122886681098 --reporting_period=once \
  --description="How will you vote in the 1988 plebiscite? Y, N, U (undecided), A (abstain)"
echo
echo "== deniable replay of the 4-answer vote: each respondent's device randomizes its category"
echo "   and sends one report; the server estimates the 4 shares with simultaneous intervals"
"${cli[@]}" replay --metric=chile_vote --csv="$csv" --column=vote
ln3=1.0986122886681098
echo
echo "== numbers: deniable create-metric --range for the respondents' age (years, clipped to"
echo "   [18, 90]); 1BitMean: each device sends one bit, 1 with probability 1/4 + (x - 18)/72 * 1/2"
echo "   at epsilon = ln 3, and the server estimates the mean"
"${cli[@]}" create-metric --name=chile_age --range=18,90 --unit=years --mechanism=one_bit_mean \
  --epsilon=$ln3 --reporting_period=once --description="Your age, in years"
echo
echo "== deniable replay --value_column=age: each respondent's device randomizes its own age"
"${cli[@]}" replay --metric=chile_age --csv="$csv" --value_column=age --blank=skip
echo
echo "== the same for the monthly income (pesos, clipped to [0, 200000]), with 1BitMean"
"${cli[@]}" create-metric --name=chile_income --range=0,200000 --unit=pesos \
  --mechanism=one_bit_mean --epsilon=$ln3 --reporting_period=once \
  --description="Your household's monthly income, in pesos"
"${cli[@]}" replay --metric=chile_income --csv="$csv" --value_column=income --blank=skip
echo
echo "== the income histogram: dBitFlip over 7 buckets (each device sends one randomized bit per"
echo "   bucket at epsilon = ln 3 for the report), the shares with simultaneous intervals and the"
echo "   median with its interval"
"${cli[@]}" create-metric --name=chile_income_histogram --range=0,200000 --unit=pesos \
  --mechanism=d_bit_flip --bucket_edges=0,5000,10000,25000,50000,100000,150000,200000 \
  --epsilon=$ln3 --reporting_period=once \
  --description="Your household's monthly income, in pesos (histogram)"
"${cli[@]}" replay --metric=chile_income_histogram --csv="$csv" --value_column=income \
  --blank=skip --quantiles=0.5,0.9
echo
echo "== strings from an open dictionary: the Section of every package in this machine's Debian"
echo "   package index (apt-cache dumpavail; libs, python, doc, ...), one device per package. Each"
echo "   device sends one bit of a Hadamard count-mean sketch at epsilon = 4; the collector finds"
echo "   the common sections with no list of candidates, estimates each from held-out devices,"
echo "   and states the share below which a section may be missed"
sections=$demo/debian-sections.csv
{
  echo section
  { apt-cache dumpavail 2>/dev/null || true; } | sed -n 's/^Section: \(.*\)$/\1/p'
} >"$sections"
if [ "$(wc -l <"$sections")" -lt 1000 ]; then  # no package index (apt-get update not run)
  { echo section; sed -n 's/^Section: \(.*\)$/\1/p' /var/lib/dpkg/status; } >"$sections"
fi
"${cli[@]}" create-metric --name=debian_section --design=heavy_hitters --epsilon=4 \
  --max_length=16 --description="The Debian section of a package (libs, python, doc, ...)"
"${cli[@]}" replay --metric=debian_section --csv="$sections" --string_column=section
echo
echo "== deniable frequency: the shares of three sections given as candidates (every device that"
echo "   carries the whole value counts), each with its interval"
printf 'perl\nrust\ngolang\n' >"$demo/candidates.txt"
"${cli[@]}" frequency --metric=debian_section --values_file="$demo/candidates.txt"
if [ "${DENIABLE_DEMO_KEEP:-0}" = 1 ]; then
  echo; echo "server left running (pid $server_pid); query it with: ${cli[*]} prevalence --metric=chile_vote_yes"
fi
