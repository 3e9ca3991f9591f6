#!/usr/bin/env bash
# tools/demo.sh as users run it (with binaries already built): the Chile replay, yes/no and with
# 4 categories, through the real server and CLI with secure randomness. Nothing here depends on
# the random draws: the test checks that what the demo printed is what the server serves (n, the
# support counts), that every printed and served estimate equals the exact computation from the
# support counts, (c/n - q*) / (p* - q*), that the true counts printed are the CSV's, and the CLI
# around categorical metrics (Bonferroni vs Sidak levels, list-metrics, series, usage errors).
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
echo "demo_test: OK"
