#!/usr/bin/env bash
# The CLI for numeric metrics (issue 28) with the real binaries: create-metric's numeric flags
# refuse bad input with exit 2 naming the flag, before any call; plan --range computes without a
# server (table and --json, the 1BitMean bound); replay --value_column refuses what is not a
# number by record.
# Usage: cli_numeric_test.sh SERVER_BINARY CLI_BINARY
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
server_bin=$1 cli_bin=$2
here=$(cd "$(dirname "$0")" && pwd)
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

# design, locally: a numeric design's privacy figures from its parameters and range (1BitMean at
# ln 3: the bit at hi against lo is symmetric randomized response, posterior 3/4).
expect_exit 0 "${offline[@]}" design --range=18,90 --mechanism=one_bit_mean --epsilon=$ln3
grep -q "P(yes | report yes)         75.00 %" out.txt
# dBitFlip (issue 38): the whole report's figures at k = d = 4, eps = 2, prior 1/2 (88.08 %,
# 0.2135 bits), labelled as the whole report's; one bucket's bit's (73.11 %) only in the note.
expect_exit 0 "${offline[@]}" design --range=0,100 --mechanism=d_bit_flip --buckets=4 \
  --epsilon=2 --prior=0.5
grep -q "P(in it | report), at most  88.08 %" out.txt || { cat out.txt; exit 1; }
grep -q "I(x; r)                     0.2135 bits (what one whole report reveals)" out.txt
grep -q "one sampled bucket's bit alone .* = 0.7311 and I(x; bit) = 0.1601 bits" out.txt
expect_usage --range "${offline[@]}" design --design=numeric --mechanism=one_bit_mean \
  --epsilon=$ln3

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

# prevalence, series and difference of a numeric metric print the server's figures: the Chile
# age replayed over 3 days with the region as a label.
csv="$here/data/chile-plebiscite-1988.csv"
expect_exit 0 "${cli[@]}" create-metric --name=age --range=18,90 --unit=years --epsilon=$ln3 \
  --reporting_period=once
grep -q "one_bit_mean v1 (epsilon = 1.0986 nats, values in \[18, 90\] years)" out.txt
expect_exit 0 "${cli[@]}" create-metric --name=income --range=0,200000 --unit=pesos \
  --design=numeric --buckets=4 --epsilon=$ln3 --reporting_period=once
grep -q "d_bit_flip v1 (k = 4 buckets, d = 4 sampled per report" out.txt  # the server's pick
expect_exit 0 "${cli[@]}" replay --metric=age --csv="$csv" --value_column=age --blank=skip \
  --label_columns=region --spread=3d
expect_exit 0 "${cli[@]}" replay --metric=income --csv="$csv" --value_column=income \
  --blank=skip --spread=3d --quantiles=0.25,0.5 --label_columns=region
now=$(date +%s)
split=$(( now - 36 * 3600 ))
for metric in age income; do
  expect_exit 0 "${cli[@]}" prevalence --metric=$metric --quantiles=0.25,0.5 --group_by=region
  cp out.txt $metric-prevalence.txt
  expect_exit 0 "${cli[@]}" prevalence --metric=$metric --quantiles=0.25,0.5 --group_by=region \
    --json
  cp out.txt $metric-prevalence.json
  expect_exit 0 "${cli[@]}" series --metric=$metric --start=-4d --bucket=day
  cp out.txt $metric-series.txt
  expect_exit 0 "${cli[@]}" series --metric=$metric --start=-4d --bucket=day --json
  cp out.txt $metric-series.json
  expect_exit 0 "${cli[@]}" difference --metric=$metric --start=-4d --end=$split --start2=$split \
    --end2=now
  cp out.txt $metric-difference.txt
  expect_exit 0 "${cli[@]}" difference --metric=$metric --start=-4d --end=$split --start2=$split \
    --end2=now --json
  cp out.txt $metric-difference.json
done
# series --plot draws a numeric metric: the mean (age) or the median (income histogram) with its
# band, on the range's axis, titled with what it is.
expect_exit 0 "${cli[@]}" series --metric=age --start=-4d --bucket=day --plot=age.svg
grep -q "<svg" age.svg && grep -q 'fill="#BED7F0"' age.svg
expect_exit 0 "${cli[@]}" series --metric=income --start=-4d --bucket=day --plot=income.svg
grep -q "<svg" income.svg && grep -q 'fill="#BED7F0"' income.svg
python3 - <<'PY'
import json, math, re
def value(x, e):  # NumericValue (tools/cli/numeric_output.h)
    decimals = min(6, max(0, 4 - math.ceil(math.log10(e["hi"] - e["lo"]))))
    text = f"{x:.{decimals}f}"
    return f"{0:.{decimals}f}" if float(text) == 0 else text
def load(name):
    return open(name + ".txt").read(), json.load(open(name + ".json"))

text, p = load("age-prevalence")
e = p["numeric"]
assert int(p["n"]) == 2531 and int(e["devices"]) == 2531, p["n"]
assert f"mean                 {value(e['mean'], e)} years (standard error " \
    f"{value(e['meanStandardError'], e)})" in text, text
assert f"[{value(e['meanCiLower'], e)}, {value(e['meanCiUpper'], e)}] years (WILSON)" in text
assert f"total                {value(e['total'], e)} years over 2531 reporting devices" in text
assert e["meanCiLower"] <= e["mean"] <= e["meanCiUpper"], e
for g in p["groups"]:  # one row per region: its mean and interval
    ge = g["numeric"]
    assert re.search(rf"^{g['groupValue']} +{g['n']} +{value(ge['mean'], e)} "
                     rf"\[{value(ge['meanCiLower'], e)}, {value(ge['meanCiUpper'], e)}\]$",
                     text, re.M), (g, text)

text, p = load("income-prevalence")
e = p["numeric"]
assert e["mechanism"] == "d_bit_flip" and len(e["buckets"]) == 4, e
assert [q["level"] for q in e["quantiles"]] == [0.25, 0.5], e["quantiles"]
for j, b in enumerate(e["buckets"]):
    name = f"[{value(b['lower'], e)}, {value(b['upper'], e)}{']' if j == 3 else ')'}"
    pct = lambda x: f"{100 * x:.2f} %"
    assert re.search(re.escape(name) + rf" +{b['sampled']} +{b['ones']} +"
                     rf"{re.escape(pct(b['estimateUnbiased']))} +"
                     rf"{re.escape(pct(b['estimateConsistent']))} +"
                     rf"{re.escape(pct(b['standardError']))} +"
                     rf"{re.escape('[' + pct(b['ciLower']) + ', ' + pct(b['ciUpper']) + ']')} +"
                     rf"{re.escape('[' + pct(b['simultaneousLower']) + ', ' + pct(b['simultaneousUpper']) + ']')}$",
                     text, re.M), (name, b, text)
for q in e["quantiles"]:
    name = "median \\(0.5\\)" if q["level"] == 0.5 else "p25 \\(0.25\\)"
    assert re.search(rf"^{name} +{value(q['value'], e)} \[{value(q['ciLower'], e)}, "
                     rf"{value(q['ciUpper'], e)}\]$", text, re.M), (q, text)

for metric in ("age", "income"):
    text, s = load(metric + "-series")
    buckets = [b for b in s["buckets"] if int(b["n"]) > 0]
    assert sum(int(b["n"]) for b in buckets) == (2531 if metric == "age" else 2449), buckets
    for b in buckets:
        if b.get("suppressed"):
            continue
        e = b["numeric"]
        if metric == "age":
            assert f"{value(e['mean'], e)} [{value(e['meanCiLower'], e)}, " \
                f"{value(e['meanCiUpper'], e)}]" in text, (b, text)
        else:
            assert f", n = {b['n']}\n" in text, (b, text)

text, d = load("age-difference")
a, b = d["first"]["numeric"], d["second"]["numeric"]
change = b["mean"] - a["mean"]
se = math.hypot(a["meanStandardError"], b["meanStandardError"])
sign = lambda x: ("+" if x >= 0 else "") + value(x, a)
assert f"change               {sign(change)} years, second minus first: " in text, (change, text)
assert f"(standard error {value(se, a)})" in text, (se, text)
lo, hi = change - 1.959963984540054 * se, change + 1.959963984540054 * se
assert f"[{sign(lo)}, {sign(hi)}] years (Wald)" in text, (lo, hi, text)
text, d = load("income-difference")
for x, y in zip(d["first"]["numeric"]["buckets"], d["second"]["numeric"]["buckets"]):
    c = y["estimateUnbiased"] - x["estimateUnbiased"]
    assert f" {c * 100:+.2f}  [" in text, (c, text)
print("cli_numeric: prevalence, series and difference print the server's figures")
PY
echo "cli_numeric: OK"
