#!/usr/bin/env bash
# Issue 40's privacy figures, planner and window counting for heavy-hitters metrics with the real
# binaries. Without a server: `deniable design --design=heavy_hitters` (epsilon and e^eps, the
# posterior bounds for a candidate, the central epsilon with the clone probability e^-eps) and
# `plan --design=heavy_hitters --find_share` (table and --json), bad input exiting 2 naming the
# flag. With one: create-metric's privacy line and wording, `design --metric`, and `top
# --window=day` counting the replayed devices once.
# Usage: cli_heavy_hitters_plan_test.sh SERVER_BINARY CLI_BINARY
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
server_bin=$1 cli_bin=$2
enter_work_dir
unset DENIABLE_TOKEN DENIABLE_TARGET || true
ln3=1.0986122886681098

expect_exit() {  # expect_exit CODE COMMAND...: the command exits with CODE
  local want=$1; shift
  set +e; "$@" >out.txt 2>err.txt; local got=$?; set -e
  if [ "$got" != "$want" ]; then
    echo "expected exit $want, got $got from: $*"; cat out.txt err.txt; exit 1
  fi
}
expect_usage() {  # expect_usage FLAG COMMAND...: exit 2, and stderr names FLAG
  local flag=$1; shift
  expect_exit 2 "$@"
  grep -q -- "$flag" err.txt || { echo "stderr does not name $flag: $*"; cat err.txt; exit 1; }
}

# Nothing listens on port 1: a call would exit 4.
cli=("$cli_bin" --target=127.0.0.1:1)
# eps = ln 3 (a = 3/4), prior 10 %: posterior at most 0.1 * 3/4 / (0.1 * 3/4 + 0.9 / 4) = 25 %,
# at least 1/28; n = 10^5: 0.0176 nats with gamma = e^-eps (docs/statistics.md section 11.6).
expect_exit 0 "${cli[@]}" design --design=heavy_hitters --epsilon=$ln3 --max_length=16 \
  --prior=0.1 --n=100000
grep -q "1.0986 nats per report (e^eps = 3.0000)" out.txt
grep -q "P(holds v | report), max    25.00 %" out.txt
grep -q "P(holds v | report), min    3.57 %" out.txt
grep -q "central epsilon             0.0176 nats at delta = 1e-06 for n = 100000 reports" out.txt
if grep -q "memoized bit\|P(yes | report yes)" out.txt; then cat out.txt; exit 1; fi
expect_exit 0 "${cli[@]}" design --design=heavy_hitters --epsilon=4 --n=100000 --json
grep -q '"centralEpsilon": 0.1699' out.txt
expect_usage prior "${cli[@]}" design --design=heavy_hitters --prior=2
expect_usage epsilon "${cli[@]}" design --design=heavy_hitters --epsilon=30

expect_exit 0 "${cli[@]}" plan --design=heavy_hitters --epsilon=4 --find_share=0.05
grep -q "devices needed              550176, one value each" out.txt
grep -q "a value held by 5.00 % of devices, found by \`top\` with probability 0.90" out.txt
expect_exit 0 "${cli[@]}" plan --design=heavy_hitters --epsilon=4 --find_share=0.05 --json
grep -q '"devicesNeeded": 550176' out.txt
# A smaller share or a higher probability needs more devices.
expect_exit 0 "${cli[@]}" plan --design=heavy_hitters --epsilon=4 --find_share=0.05 \
  --find_probability=0.99 --json
more=$(sed -n 's/.*"devicesNeeded": \([0-9]*\).*/\1/p' out.txt)
[ "$more" -gt 550176 ] || { echo "p = 0.99 needs $more devices, not more than 550176"; exit 1; }
expect_usage --find_share "${cli[@]}" plan --design=heavy_hitters
expect_usage --find_share "${cli[@]}" plan --design=heavy_hitters --find_share=1.5
expect_usage --find_share "${cli[@]}" plan --design=heavy_hitters --find_share=1e-9
expect_usage --find_probability "${cli[@]}" plan --design=heavy_hitters --find_share=0.05 \
  --find_probability=1
expect_usage --max_prefixes "${cli[@]}" plan --design=heavy_hitters --find_share=0.05 \
  --max_prefixes=5000
expect_usage --level "${cli[@]}" plan --design=heavy_hitters --find_share=0.05 --level=1

# The server: create-metric's figures, design --metric, and a whole day counted by devices.
"$server_bin" --listen=127.0.0.1:0 --http_listen=127.0.0.1:0 --db=deniable.db >server.log 2>&1 &
server_pid=$!
port=$(wait_for_port server.log "$server_pid")
cli=("$cli_bin" --target="127.0.0.1:$port")
expect_exit 0 "${cli[@]}" create-metric --name=sig --design=heavy_hitters --epsilon=4 \
  --max_length=8
grep -q "memoized report per distinct value" out.txt
if grep -q "memoized bit" out.txt; then cat out.txt; exit 1; fi
grep -q "privacy         4.0000 nats per report (e^eps = 54.5982)" out.txt
# 1 / (1 + e^-4) = 98.20 % and 1 / (1 + e^4) = 1.80 % from an even prior.
grep -q "P(holds it | report) is between 1.80 % and 98.20 %" out.txt
expect_exit 0 "${cli[@]}" design --metric=sig --prior=0.01 --n=100000
grep -q "4.0000 nats per report (e^eps = 54.5982)" out.txt
grep -q "P(holds v | report), max    35.55 %" out.txt  # 0.01 / (0.01 + 0.99 e^-4)
grep -q "central epsilon             0.1700 nats at delta = 1e-06 for n = 100000 reports" out.txt
{
  echo "sig"
  for i in $(seq 1 1500); do echo "alpha"; done
  for i in $(seq 1 500); do echo "beta$((i % 50))"; done
} >sig.csv
expect_exit 0 "${cli[@]}" replay --metric=sig --csv=sig.csv --string_column=sig
grep -q "2000 devices reported 51 distinct values" err.txt
# Today's UTC day: every replayed row is a fresh device, counted once at its first report.
expect_exit 0 "${cli[@]}" top --metric=sig --window=day --json
grep -q '"devices": "2000"' out.txt
expect_exit 0 "${cli[@]}" frequency --metric=sig --value=alpha --window=day
grep -q "2000 devices" out.txt
grep -q "^central epsilon " out.txt  # the shuffle bound of the answer's 2000 reports
grep -q "counted: the devices active in the day $(date -u +%F) (UTC), each once" out.txt
expect_usage --end "${cli[@]}" top --metric=sig --window=day --end=now
echo "cli_heavy_hitters_plan: ok"
