#!/usr/bin/env bash
# Issue 40's privacy figures and planner for heavy-hitters designs with the real binary, without a
# server: `deniable design --design=heavy_hitters` (epsilon and e^eps, the posterior bounds for a
# candidate, the central epsilon with the clone probability e^-eps) and `plan
# --design=heavy_hitters --find_share` (table and --json), bad input exiting 2 naming the flag.
# Usage: cli_heavy_hitters_plan_test.sh CLI_BINARY
set -euo pipefail
cli_bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
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
echo "cli_heavy_hitters_plan: ok"
