#!/usr/bin/env bash
# End to end, as users run it: the real deniable-server binary on an ephemeral port and a fresh
# database, the real CLI creating the metric and replaying the Chile survey with secure
# randomness, then the prevalence read back as JSON.
# Asserts n = 2532 and |estimate - 868/2532| < 5 standard errors (fails with probability < 1e-6).
# Usage: e2e_chile_test.sh SERVER_BINARY CLI_BINARY CSV
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
server_bin=$1 cli_bin=$2 csv=$3
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$server_bin" --listen=127.0.0.1:0 --db="$work/deniable.db" >"$work/server.log" 2>&1 &
server_pid=$!
port=$(wait_for_port "$work/server.log" "$server_pid")
target=127.0.0.1:$port
"$cli_bin" --target="$target" health

"$cli_bin" --target="$target" create-metric --name=chile_vote_yes --design=two_coin \
  --description="Will you vote Yes in the 1988 plebiscite?"
"$cli_bin" --target="$target" replay --metric=chile_vote_yes --csv="$csv" --column=vote --yes=Y \
  --label_columns=region --group_by=region
"$cli_bin" --target="$target" prevalence --metric=chile_vote_yes --json >"$work/prevalence.json"
"$cli_bin" --target="$target" prevalence --metric=chile_vote_yes --group_by=region --json \
  >"$work/regions.json"
"$cli_bin" --target="$target" design --design=two_coin --prior=0.3 --json >"$work/design.json"
"$cli_bin" --target="$target" plan --design=two_coin --half_width=0.05 --prior=-1 --json \
  >"$work/plan.json"
if "$cli_bin" --target="$target" create-metric --name=bad --design=forced_response --p=1.5 \
  2>"$work/bad.txt"; then
  echo "an invalid design was accepted"; exit 1
fi
grep -q "INVALID_ARGUMENT: design.forced_response: p must be" "$work/bad.txt"

python3 - "$work/prevalence.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
n = int(p["n"]); est = p["estimateUnbiased"]; se = p["standardError"]
truth = 868 / 2532
print(f"n={n} estimate={est:.4f} se={se:.4f} truth={truth:.4f} z={(est - truth) / se:.2f}")
assert n == 2532, f"n is {n}, expected 2532"
assert abs(est - truth) < 5 * se, "estimate more than 5 standard errors from the truth"
assert p["method"] == "WILSON" and p["ciLower"] <= est <= p["ciUpper"]
PY
python3 - "$work/regions.json" "$work/design.json" "$work/plan.json" <<'PY'
import json, math, sys
regions, design, plan = (json.load(open(f)) for f in sys.argv[1:])
groups = regions["groups"]
assert sorted(g["groupValue"] for g in groups) == ["C", "M", "N", "S", "SA"], groups
assert sum(int(g["n"]) for g in groups) == 2532
assert abs(design["posteriorGivenYes"] - 3 * 0.3 / (2 * 0.3 + 1)) < 1e-12
assert abs(design["design"]["epsilon"] - math.log(3)) < 1e-12
assert int(plan["reportsNeededWorstCase"]) == math.ceil(1.959963984540054**2 / (4 * 0.05**2 * 0.25))
print("regions, design and plan: OK")
PY

# The acknowledged reports survive a restart of the server.
kill -TERM "$server_pid"; wait "$server_pid" || true
"$server_bin" --listen=127.0.0.1:0 --db="$work/deniable.db" >"$work/server2.log" 2>&1 &
server_pid=$!
port=$(wait_for_port "$work/server2.log" "$server_pid")
"$cli_bin" --target="127.0.0.1:$port" prevalence --metric=chile_vote_yes --json >"$work/after.json"
python3 - "$work/prevalence.json" "$work/after.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["n"] == b["n"] and a["yesCount"] == b["yesCount"], (a["n"], b["n"])
print("after restart: same n and yes count")
PY
if grep -qiE 'bit=|answer=' "$work/server.log"; then echo "server log mentions bits"; exit 1; fi
echo "e2e: OK"
