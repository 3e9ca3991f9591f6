#!/usr/bin/env bash
# tools/demo.sh as users run it (with binaries already built): the Chile replay, yes/no and with
# 4 categories, through the real server and CLI with secure randomness. Nothing here depends on
# the random draws: the test checks that what the demo printed is what the server serves (n, the
# support counts), that every printed and served estimate equals the exact computation from the
# support counts, (c/n - q*) / (p* - q*), that the true counts printed are the CSV's, and the CLI
# around categorical metrics (Bonferroni vs Sidak levels, list-metrics, series, usage errors).
# The numeric part (age and income): the printed means, intervals, histogram rows and quantiles
# are the server's, the printed truths are the CSV's, and each estimate lies within 6 standard
# errors of the truth (a property of the mechanism that fails with probability below 1e-8, so
# it cannot flake; the 95 % intervals are not asserted to cover, since the randomness is secure).
# Usage: demo_test.sh SERVER_BINARY CLI_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/server.sh"
server_bin=$1 cli_bin=$2
enter_work_dir

DENIABLE_DEMO_SERVER=$server_bin DENIABLE_DEMO_CLI=$cli_bin DENIABLE_DEMO_PORT=0 \
  DENIABLE_DEMO_DIR="$work/demo" bash "$here/../tools/demo.sh" >"$work/demo.txt"
cat "$work/demo.txt"

# The demo stopped its server; the reports are in its database.
"$server_bin" --listen=127.0.0.1:0 --db="$work/demo/deniable.db" >"$work/server.log" 2>&1 &
server_pid=$!
port=$(wait_for_port "$work/server.log" "$server_pid")
cli=("$cli_bin" --target="127.0.0.1:$port")
"${cli[@]}" prevalence --metric=chile_vote --json >"$work/sidak.json"
"${cli[@]}" prevalence --metric=chile_vote --simultaneous=bonferroni --json >"$work/bonferroni.json"
"${cli[@]}" prevalence --metric=chile_vote_yes --json >"$work/yes.json"
"${cli[@]}" list-metrics >"$work/list.txt"
grep -q "categories: Y, N, U, A" "$work/list.txt"

python3 - "$work/demo.txt" "$work/sidak.json" "$work/bonferroni.json" "$work/yes.json" \
  "$here/data/chile-plebiscite-1988.csv" <<'PY'
import collections, csv, json, re, sys
demo = open(sys.argv[1]).read()
sidak, bonf, yes = (json.load(open(f)) for f in sys.argv[2:5])
truth = collections.Counter(r["vote"] for r in csv.DictReader(open(sys.argv[5])))

# The yes/no replay: n and the true share as before.
assert int(yes["n"]) == 2532 and "34.28 %  (868 / 2532" in demo, "yes/no part"

part = demo[demo.index("4-answer vote"):]
n = int(sidak["n"])
assert n == 2532, n
assert f"reports (n)          {n}\n" in part, "printed n differs from the server's n"
design = sidak["design"]
assert design["parameters"]["categorical"]["mechanism"] == "K_RR", design  # 4 < 3 e^eps + 2
p, q = design["a"], design["b"]
shares = sidak["shares"]
assert [s["category"] for s in shares] == ["Y", "N", "U", "A"]
assert sum(int(s["supportCount"]) for s in shares) == n  # k-RR: one category per report
rows = {m.group(1): m.groups() for m in re.finditer(
    r"^(\w+) +(\d+) +(-?[\d.]+) % +(-?[\d.]+) % +([\d.]+) % +\[(-?[\d.]+) %, (-?[\d.]+) %\] +"
    r"\[(-?[\d.]+) %, (-?[\d.]+) %\]$", part, re.M)}
for s in shares:
    c = int(s["supportCount"])
    exact = (c / n - q) / (p - q)
    assert abs(s["estimateUnbiased"] - exact) < 1e-12, (s, exact)
    row = rows[s["category"]]
    assert int(row[1]) == c, ("printed support count", row, c)
    assert row[2] == f"{100 * exact:.2f}", ("printed estimate", row, exact)
    assert row[7] == f"{100 * s['simultaneousLower']:.2f}" and \
        row[8] == f"{100 * s['simultaneousUpper']:.2f}", row
    assert s["simultaneousLower"] <= s["ciLower"] and s["ciUpper"] <= s["simultaneousUpper"]
    t = truth[s["category"]]
    assert re.search(rf"^{s['category']} +{100 * exact:.2f} % +\[.*\] +"
                     rf"{100 * t / n:.2f} % \({t} / {n}\)$", part, re.M), ("truth row", s)
assert abs(sum(s["estimateConsistent"] for s in shares) - 1) < 1e-9
assert all(s["estimateConsistent"] >= 0 for s in shares)
assert sidak["simultaneousMethod"] == "sidak" and bonf["simultaneousMethod"] == "bonferroni"
assert abs(sidak["perCategoryLevel"] - 0.95 ** 0.25) < 1e-12
assert abs(bonf["perCategoryLevel"] - (1 - 0.05 / 4)) < 1e-12
for a, b in zip(sidak["shares"], bonf["shares"]):  # Bonferroni's level is the higher one
    assert b["simultaneousLower"] <= a["simultaneousLower"] + 1e-12
    assert a["simultaneousUpper"] <= b["simultaneousUpper"] + 1e-12
print("demo: printed n, support counts and estimates match the server's exact computation")
PY

# The series of the categorical metric, table and JSON.
end=$(( $(date +%s) + 86400 ))
window=(--metric=chile_vote --start=$(( end - 30 * 86400 )) --end="$end" --bucket=week)
"${cli[@]}" series "${window[@]}" --json >"$work/series.json"
"${cli[@]}" series "${window[@]}" >"$work/series.txt"
python3 - "$work/series.json" "$work/series.txt" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1])); stext = open(sys.argv[2]).read()
names = ["Y", "N", "U", "A"]
buckets = [b for b in s["buckets"] if int(b.get("n", 0)) > 0]
assert sum(int(b["n"]) for b in buckets) == 2532
for b in buckets:
    assert [x["category"] for x in b["shares"]] == names, b
assert "SIMULTANEOUS INTERVAL" in stext and len(re.findall(r"^ +[YNUA] +[\d.]+ %|^\S.* [YNUA] +[\d.]+ %",
                                                              stext, re.M)) == 4 * len(buckets), stext
print("series of the categorical metric: OK")
PY

# The numeric metrics: what the demo printed is what the server serves, beside the CSV's truth.
"${cli[@]}" prevalence --metric=chile_age --json >"$work/age.json"
"${cli[@]}" prevalence --metric=chile_income --json >"$work/income.json"
"${cli[@]}" prevalence --metric=chile_income_histogram --quantiles=0.5,0.9 --json \
  >"$work/histogram.json"
"${cli[@]}" list-metrics >"$work/list.txt"
grep -q "range: \[18, 90\] years" "$work/list.txt"
python3 - "$work/demo.txt" "$work/age.json" "$work/income.json" "$work/histogram.json" \
  "$here/data/chile-plebiscite-1988.csv" <<'PY'
import csv, json, math, re, sys
demo = open(sys.argv[1]).read()
age, income, hist = (json.load(open(f)) for f in sys.argv[2:5])
rows = list(csv.DictReader(open(sys.argv[5])))

def value(x, width):  # NumericValue (tools/cli/numeric_output.h)
    decimals = min(6, max(0, 4 - math.ceil(math.log10(width))))
    text = f"{x:.{decimals}f}"
    return f"{0:.{decimals}f}" if float(text) == 0 else text

def part(start, end=None):
    begin = demo.index(start)
    return demo[begin:demo.index(end, begin)] if end else demo[begin:]

for name, p, column, text in (
        ("age", age, "age", part("replay --value_column=age", "monthly income")),
        ("income", income, "income", part("monthly income", "income histogram"))):
    e = p["numeric"]
    values = [min(max(float(r[column]), e["lo"]), e["hi"]) for r in rows if r[column].strip()]
    truth = sum(values) / len(values)
    width, unit = e["hi"] - e["lo"], " " + e["unit"]
    assert int(p["n"]) == len(values) == int(e["devices"]), (name, p["n"], len(values))
    assert e["mechanism"] == "one_bit_mean", e
    # The mean is lo + (hi - lo) * (ybar (e^eps + 1) - 1) / (e^eps - 1) of the server's counts.
    a = math.exp(p["epsilon"])
    exact = e["lo"] + width * (int(p["yesCount"]) / int(p["n"]) * (a + 1) - 1) / (a - 1)
    assert abs(e["mean"] - exact) < 1e-9 * width, (name, e["mean"], exact)
    assert abs(e["total"] - e["mean"] * int(e["devices"])) < 1e-6 * abs(e["total"]) + 1e-9
    assert f"mean                 {value(e['mean'], width)}{unit} (standard error " in text, name
    assert f"server mean          {value(e['mean'], width)}{unit}  95 % interval " \
        f"[{value(e['meanCiLower'], width)}, {value(e['meanCiUpper'], width)}]{unit}" in text, name
    assert f"true mean            {value(truth, width)}{unit}  (of the {len(values)} replayed" \
        in text, (name, truth)
    assert f"over {len(values)} reporting devices" in text, name
    assert e["meanCiLower"] <= e["mean"] <= e["meanCiUpper"], e
    assert abs(e["mean"] - truth) <= 6 * e["meanStandardError"], (name, e, truth)
    print(f"demo {name}: mean {e['mean']:.2f} [{e['meanCiLower']:.2f}, {e['meanCiUpper']:.2f}]"
          f"{unit}, true {truth:.2f}")

text = part("income histogram")
e = hist["numeric"]
edges = [0, 5000, 10000, 25000, 50000, 100000, 150000, 200000]
values = [float(r["income"]) for r in rows if r["income"].strip()]
assert int(hist["n"]) == len(values) == 2449, hist["n"]
assert e["mechanism"] == "d_bit_flip" and len(e["buckets"]) == 7, e
assert [b["lower"] for b in e["buckets"]] + [e["buckets"][-1]["upper"]] == edges, e["buckets"]
a = math.exp(hist["epsilon"] / 2)
for j, b in enumerate(e["buckets"]):
    lo, hi = edges[j], edges[j + 1]
    share = sum(1 for v in values if lo <= v < hi or (j == 6 and v == hi)) / len(values)
    s, ones = int(b["sampled"]), int(b["ones"])
    assert s == len(values), b  # d = k: every report samples every bucket
    exact = (ones / s - 1 / (a + 1)) / ((a - 1) / (a + 1))
    assert abs(b["estimateUnbiased"] - exact) < 1e-9, (b, exact)
    assert b["simultaneousLower"] <= b["ciLower"] and b["ciUpper"] <= b["simultaneousUpper"], b
    assert abs(b["estimateUnbiased"] - share) <= 6 * b["standardError"], (b, share)
    name = f"[{lo}, {hi}{']' if j == 6 else ')'}"
    row = re.search(re.escape(name) + r" +(-?[\d.]+) % +\[(-?[\d.]+) %, (-?[\d.]+) %\] +"
                    r"([\d.]+) %$", text, re.M)
    assert row, (name, text)
    assert row.group(1) == f"{100 * b['estimateUnbiased']:.2f}", (row.groups(), b)
    assert row.group(2) == f"{100 * b['simultaneousLower']:.2f}", (row.groups(), b)
    assert row.group(3) == f"{100 * b['simultaneousUpper']:.2f}", (row.groups(), b)
    assert row.group(4) == f"{100 * share:.2f}", (row.groups(), share)
assert abs(sum(b["estimateConsistent"] for b in e["buckets"]) - 1) < 1e-9
assert [q["level"] for q in e["quantiles"]] == [0.5, 0.9], e["quantiles"]
median = e["quantiles"][0]
assert median["ciLower"] <= median["value"] <= median["ciUpper"], median
true_median = sorted(values)[math.ceil(0.5 * len(values)) - 1]
assert re.search(rf"^median \(0.5\) +{value(median['value'], 200000)} +"
                 rf"\[{value(median['ciLower'], 200000)}, {value(median['ciUpper'], 200000)}\] +"
                 rf"{value(true_median, 200000)} pesos \((covered|missed)\)$", text, re.M), text
print(f"demo income histogram: median {median['value']:.0f} [{median['ciLower']:.0f}, "
      f"{median['ciUpper']:.0f}] pesos, true {true_median:.0f}")
PY

code=0
"${cli[@]}" create-metric --name=bad_range --range=90,18 --epsilon=1 2>"$work/err.txt" || code=$?
[ "$code" = 2 ] && grep -q -- "--range" "$work/err.txt"
code=0
"${cli[@]}" create-metric --name=bad_edges --range=0,100 --bucket_edges=0,50,90 --epsilon=1 \
  2>"$work/err.txt" || code=$?
[ "$code" = 2 ] && grep -q -- "--bucket_edges" "$work/err.txt"
code=0
"${cli[@]}" replay --metric=chile_age --csv="$here/data/chile-plebiscite-1988.csv" \
  --column=vote 2>"$work/err.txt" || code=$?
[ "$code" = 2 ] && grep -q -- "--value_column" "$work/err.txt"

code=0
"${cli[@]}" create-metric --name=bad --categories=Y --design=k_rr --epsilon=1 2>"$work/err.txt" \
  || code=$?
[ "$code" = 2 ] && grep -q -- "--categories" "$work/err.txt"
code=0
"${cli[@]}" replay --metric=chile_vote --csv="$here/data/chile-plebiscite-1988.csv" \
  --column=vote --yes=Y 2>"$work/err.txt" || code=$?
[ "$code" != 0 ] && grep -q "FAILED_PRECONDITION\|Report(metric, category)" "$work/err.txt"
code=0
"${cli[@]}" replay --metric=chile_vote_yes --csv="$here/data/chile-plebiscite-1988.csv" \
  --column=vote 2>"$work/err.txt" || code=$?
[ "$code" = 2 ] && grep -q "is a yes/no metric: give --yes" "$work/err.txt"
# The heavy-hitters part (Debian sections): the printed rows are the server's GetTopValues, the
# printed truths the CSV's, and every returned value's share lies within 6 standard errors of its
# true share in the file (0 for a value no package has): a property that fails with probability
# below 1e-8, so it cannot flake with secure randomness; which sections are found is not asserted.
"${cli[@]}" top --metric=debian_section --json >"$work/top.json"
python3 - "$work/demo.txt" "$work/top.json" "$work/demo/debian-sections.csv" <<'PY'
import collections, csv, json, sys
demo = open(sys.argv[1]).read()
top = json.load(open(sys.argv[2]))
rows = [r["section"] for r in csv.DictReader(open(sys.argv[3]))]
truth = collections.Counter(rows)
part = demo[demo.index("strings from an open dictionary"):]
assert int(top["devices"]) == len(rows), (top["devices"], len(rows))
assert f"{100 * top['detectionThreshold']:.2f}%" in part, "printed threshold is the server's"
for v in top.get("values", []):
    import base64
    value = base64.b64decode(v["value"]).decode()
    share, se = v["share"], v["standardError"]
    t = truth[value] / len(rows)
    assert abs(share - t) <= 6 * se, (value, share, se, t)
    assert f'"{value}"' in part and f"{100 * share:.2f}%" in part, ("printed row", value)
    assert f"true {100 * t:6.2f}%" in part, ("printed truth", value, t)
print(f"demo sections: {len(top.get('values', []))} found of {len(truth)} sections, threshold "
      f"{100 * top['detectionThreshold']:.2f} %")
PY
echo "demo_test: OK"
