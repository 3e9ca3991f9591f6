#!/usr/bin/env bash
# The CLI for numeric metrics (issue 28) with the real binaries: create-metric's numeric flags
# refuse bad input with exit 2 naming the flag, before any call; plan --range computes without a
# server (table and --json, the 1BitMean bound); replay --value_column refuses what is not a
# number by record.
# Usage: cli_numeric_test.sh SERVER_BINARY CLI_BINARY
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

# Usage errors, found before any call (nothing listens on port 1: a call would exit 4).
offline=("$cli_bin" --target=127.0.0.1:1)
create=("${offline[@]}" create-metric --name=m)
expect_usage --range "${create[@]}" --range=90,18 --epsilon=1
expect_usage --range "${create[@]}" --range=18 --epsilon=1
expect_usage --range "${create[@]}" --range=a,b --epsilon=1
expect_usage --range "${create[@]}" --design=numeric --epsilon=1
expect_usage --unit "${create[@]}" --unit=years --design=two_coin
expect_usage --epsilon "${create[@]}" --range=0,100
expect_usage --design "${create[@]}" --range=0,100 --design=two_coin
expect_usage --mechanism "${create[@]}" --range=0,100 --epsilon=1 --mechanism=median
expect_usage --buckets "${create[@]}" --range=0,100 --epsilon=1 --buckets=257
expect_usage --buckets "${create[@]}" --range=0,100 --epsilon=1 --buckets=4 \
  --bucket_edges=0,50,100
expect_usage --bucket_edges "${create[@]}" --range=0,100 --epsilon=1 --bucket_edges=0,50,90
expect_usage --bucket_edges "${create[@]}" --range=0,100 --epsilon=1 --bucket_edges=0,60,50,100
expect_usage --sampled_buckets "${create[@]}" --range=0,100 --epsilon=1 \
  --mechanism=one_bit_mean --sampled_buckets=2
expect_usage --sampled_buckets "${create[@]}" --range=0,100 --epsilon=1 --buckets=4 \
  --sampled_buckets=5
expect_usage --categories "${create[@]}" --range=0,100 --epsilon=1 --categories=Y,N
expect_usage --quantiles "${offline[@]}" prevalence --metric=m --quantiles=0.5,1.5
expect_usage "--range is not a flag of this command" "${offline[@]}" prevalence --metric=m \
  --range=0,1
expect_usage --value_column "${offline[@]}" replay --metric=m --csv=x.csv --value_column=age \
  --column=age
expect_usage --half_width "${offline[@]}" plan --range=18,90 --epsilon=$ln3

# plan, locally: the mean within +/- 2 years of [18, 90] at eps = ln 3 (C = 2) needs
# ceil(1.96^2 * 72^2 * 4 / (4 * 4)) = 4979 devices; the 7 income buckets within +/- 5 points
# together 10025 (docs/cli.md).
expect_exit 0 "${offline[@]}" plan --range=18,90 --unit=years --mechanism=one_bit_mean \
  --epsilon=$ln3 --half_width=2
grep -q "the mean within +/- 2.00 years at 95 %" out.txt
grep -q "devices needed              4979, one report each" out.txt
expect_exit 0 "${offline[@]}" plan --range=0,200000 --epsilon=$ln3 --half_width=0.05 \
  --bucket_edges=0,5000,10000,25000,50000,100000,150000,200000 --json
python3 - <<'PY'
import json, math
d = json.load(open("out.txt"))
assert d["mechanism"] == "d_bit_flip" and d["buckets"] == 7 and d["sampledBuckets"] == 7, d
assert abs(d["perBucketLevel"] - 0.95 ** (1 / 7)) < 1e-12, d
assert d["devicesNeeded"] == 10025, d
PY

# replay refuses a value that is not a number, naming the record and not the value.
printf 'region,age\nN,65\nS,sixty\n' >survey.csv
"$server_bin" --listen=127.0.0.1:0 --db="$work/d.db" >server.log 2>&1 &
server_pid=$!
trap 'kill $server_pid 2>/dev/null || true' EXIT
port=$(wait_for_port server.log "$server_pid")
cli=("$cli_bin" --target="127.0.0.1:$port")
expect_exit 0 "${cli[@]}" create-metric --name=yes_no --design=two_coin
expect_usage "not a numeric metric" "${cli[@]}" replay --metric=yes_no --csv=survey.csv \
  --value_column=age
echo "cli_numeric: OK"
