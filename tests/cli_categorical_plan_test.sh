#!/usr/bin/env bash
# Issue 14's planner and design description for categorical designs with the real binaries:
# `deniable design --categories` and `plan --categories` compute without a server (tables and
# --json), bad input exits 2 naming the flag or field, and the server answers the same
# DescribeDesign and PlanSurvey over gRPC (design --metric --n) and HTTP/JSON.
# Usage: cli_categorical_plan_test.sh SERVER_BINARY CLI_BINARY
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

# Without a server (nothing listens on port 1). k-RR, k = 4, eps = ln 3 at the uniform prior:
# P(true = r | r) = 1/2, I(x; r) = (1/2) log2(4/3) = 0.2075 bits; the Chile replay's n = 2532
# gives the central epsilon 0.1023 nats (docs/privacy.md).
local_cli=("$cli_bin" --target=127.0.0.1:1)
expect_exit 0 "${local_cli[@]}" design --categories=Y,N,U,A --epsilon=$ln3 --n=2532
grep -q "I(x; r)                     0.2075 bits" out.txt
grep -Eq "^U +25.00 % +16.67 % +16.67 % +50.00 % +16.67 %" out.txt
grep -q "central epsilon             0.1023 nats at delta = 1e-06 for n = 2532 reports" out.txt
expect_exit 0 "${local_cli[@]}" design --categories=Y,N,U,A --design=oue --epsilon=1 \
  --shares=0.35,0.35,0.23,0.07 --json
python3 - <<'PY'
import json
d = json.load(open("out.txt"))
assert d["channel"] == "support" and d["design"]["parameters"]["categorical"]["mechanism"] == "OUE", d
assert d["categories"] == ["Y", "N", "U", "A"] and d["categoryPrior"] == [0.35, 0.35, 0.23, 0.07], d
for r in d["reported"]:
    assert abs(sum(r["posterior"]) - 1) < 1e-12, r
PY
# +/- 5 points on all 4 shares at 95 %: 3458 for one alone, 5585 together (Sidak), 5615
# (Bonferroni) (common/categorical_planner_test.cc by hand).
expect_exit 0 "${local_cli[@]}" plan --categories=Y,N,U,A --epsilon=$ln3 --half_width=0.05
grep -q "one share alone             3458 reports" out.txt
grep -q "all 4 shares together      5585 reports" out.txt
expect_exit 0 "${local_cli[@]}" plan --categories=Y,N,U,A --epsilon=$ln3 --half_width=0.05 \
  --simultaneous=bonferroni --shares=0.35,0.35,0.23,0.07 --json
python3 - <<'PY'
import json
p = json.load(open("out.txt"))
assert p["simultaneousMethod"] == "BONFERRONI", p
assert int(p["reportsNeededSimultaneousWorstCase"]) == 5615, p
assert [c["category"] for c in p["categoryPlans"]] == ["Y", "N", "U", "A"], p
assert int(p["reportsNeededSimultaneous"]) == max(int(c["reportsNeededSimultaneous"]) for c in p["categoryPlans"]), p
PY
# Bad input: exit 2, naming the flag or the field.
expect_exit 2 "${local_cli[@]}" design --design=k_rr --epsilon=1
grep -q -- "--categories" err.txt
expect_exit 2 "${local_cli[@]}" plan --categories=Y,N,U --epsilon=1 --shares=0.5,0.4
grep -q "assumed_shares: must hold one share for each of the 3" err.txt
expect_exit 2 "${local_cli[@]}" design --categories=Y,N --design=olh --epsilon=45
grep -q "design.categorical.epsilon" err.txt
expect_exit 2 "${local_cli[@]}" plan --categories=Y,N --epsilon=1 --simultaneous=tukey
grep -q -- "--simultaneous" err.txt
expect_exit 2 "${local_cli[@]}" design --categories=Y,N --epsilon=1 --n=2000000000
grep -q -- "--n must be in" err.txt

# The server: a categorical metric described by name with n, and the same calls over HTTP/JSON.
"$server_bin" --listen=127.0.0.1:0 --http_listen=127.0.0.1:0 --db=deniable.db >server.log 2>&1 &
server_pid=$!
port=$(wait_for_port server.log "$server_pid")
http_port=$(sed -n 's/.*http_port=\([0-9][0-9]*\).*/\1/p' server.log | head -n1)
cli=("$cli_bin" --target="127.0.0.1:$port")
expect_exit 0 "${cli[@]}" create-metric --name=vote --categories=Y,N,U,A --epsilon=$ln3
expect_exit 0 "${cli[@]}" design --metric=vote --n=2532
grep -q "categories                  4: Y, N, U, A" out.txt
grep -q "central epsilon             0.1023 nats" out.txt
curl -sf -X POST -H 'Content-Type: application/json' \
  "http://127.0.0.1:$http_port/v1/QueryService/DescribeDesign" \
  -d '{"design": {"categorical": {"mechanism": "K_RR", "epsilon": 1.0986122886681098}},
       "categories": ["Y", "N", "U", "A"], "n": "2532"}' >describe.json
curl -sf -X POST -H 'Content-Type: application/json' \
  "http://127.0.0.1:$http_port/v1/QueryService/PlanSurvey" \
  -d '{"design": {"categorical": {"epsilon": 1.0986122886681098}}, "k": 4, "halfWidth": 0.05}' \
  >plan.json
set +e
code=$(curl -s -o bad.json -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
  "http://127.0.0.1:$http_port/v1/QueryService/PlanSurvey" \
  -d '{"design": {"categorical": {"epsilon": 1}}, "k": 300, "halfWidth": 0.05}')
set -e
python3 - "$code" <<'PY'
import json, math, sys
d = json.load(open("describe.json"))
assert d["reported"][2]["category"] == "U" and abs(d["reported"][2]["posterior"][2] - 0.5) < 1e-12, d
assert abs(d["categoricalMutualInformationBits"] - 0.5 * math.log2(4 / 3)) < 1e-12, d
assert 0 < d["centralEpsilon"] < 0.11 and d["centralN"] == 2532, d  # int64: a JSON number
p = json.load(open("plan.json"))
assert p["categories"] == ["0", "1", "2", "3"] and int(p["reportsNeededSimultaneous"]) == 5585, p
assert sys.argv[1] == "400", sys.argv[1]
assert "k: must be between 2 and 256" in open("bad.json").read()
PY
echo "cli categorical plan: OK"
