#!/usr/bin/env bash
# deniable delete-metric with the real server and CLI (issue 17, docs/operations.md): the analyst
# role only, the typed confirmation (or --yes), the metric's counts gone while other metrics keep
# theirs, reports naming it refused with NOT_FOUND at once (no stale cache), its name reusable
# with an empty history, and the exit codes of docs/cli.md.
# Usage: delete_metric_test.sh SERVER_BINARY CLI_BINARY
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
server_bin=$1 cli_bin=$2
enter_work_dir
unset DENIABLE_TOKEN DENIABLE_TARGET || true

expect_exit() {  # expect_exit CODE COMMAND...: the command exits with CODE (stdin from in.txt)
  local want=$1; shift
  set +e; "$@" <in.txt >out.txt 2>err.txt; local got=$?; set -e
  if [ "$got" != "$want" ]; then
    echo "expected exit $want, got $got from: $*"; cat out.txt err.txt; exit 1
  fi
}

reporter=$("$server_bin" tokens add --role=reporter --label=devices --db=deniable.db 2>/dev/null)
analyst=$("$server_bin" tokens add --role=analyst --label=me --db=deniable.db 2>/dev/null)
"$server_bin" --listen=127.0.0.1:0 --http_listen=127.0.0.1:0 --db=deniable.db \
  --default_min_reports=1 >server.log 2>&1 &
server_pid=$!
port=$(wait_for_port server.log "$server_pid")
http_port=$(sed -n 's/.*event=start .* http_port=\([0-9][0-9]*\) .*/\1/p' server.log | head -n1)
H="http://127.0.0.1:$http_port"
cli=("$cli_bin" --target="127.0.0.1:$port")
: >in.txt

submit() {  # submit METRIC FIRST_ID_BYTE: two reports over HTTP/JSON; prints the response
  local now=$(( $(date +%s) / 3600 * 3600 ))
  curl -s -H "Authorization: Bearer $reporter" "$H/v1/ReportService/SubmitReports" -d \
    '{"reports":[{"metric":"'$1'","designVersion":1,"bit":1,"reportId":"'$2'AECAwQFBgcICQoLDA0ODw==","eventTimeSeconds":"'$now'"},{"metric":"'$1'","designVersion":1,"bit":0,"reportId":"'$2'QECAwQFBgcICQoLDA0ODw==","eventTimeSeconds":"'$now'"}]}'
}

for m in doomed kept; do
  DENIABLE_TOKEN=$analyst "${cli[@]}" create-metric --name=$m --design=two_coin >/dev/null
  submit $m A >/dev/null
done
DENIABLE_TOKEN=$analyst "${cli[@]}" prevalence --metric=doomed --json >before.json
python3 -c 'import json; p=json.load(open("before.json")); assert int(p["n"]) == 2, p'

# The reporter role may not delete; a wrong or missing confirmation deletes nothing (exit 2).
DENIABLE_TOKEN=$reporter expect_exit 5 "${cli[@]}" delete-metric doomed --yes
echo "kept" >in.txt
DENIABLE_TOKEN=$analyst expect_exit 2 "${cli[@]}" delete-metric doomed
grep -q "not confirmed" err.txt
: >in.txt
DENIABLE_TOKEN=$analyst expect_exit 2 "${cli[@]}" delete-metric doomed
DENIABLE_TOKEN=$analyst expect_exit 2 "${cli[@]}" delete-metric --yes
DENIABLE_TOKEN=$analyst expect_exit 0 "${cli[@]}" prevalence --metric=doomed

# Typed confirmation: deleted. Its reports are now refused, its counts gone; "kept" untouched.
echo "doomed" >in.txt
DENIABLE_TOKEN=$analyst expect_exit 0 "${cli[@]}" delete-metric doomed
: >in.txt
grep -q "event=metric_deleted metric=doomed" server.log
DENIABLE_TOKEN=$analyst expect_exit 3 "${cli[@]}" prevalence --metric=doomed
submit doomed B >refused.json
python3 -c 'import json; r=json.load(open("refused.json")); assert int(r["accepted"]) == 0 and [x["code"] for x in r["rejections"]] == [5, 5], r'
DENIABLE_TOKEN=$analyst expect_exit 0 "${cli[@]}" prevalence --metric=kept --json
python3 -c 'import json; p=json.load(open("out.txt")); assert int(p["n"]) == 2, p'
DENIABLE_TOKEN=$analyst expect_exit 0 "${cli[@]}" list-metrics --json
python3 -c 'import json; m=json.load(open("out.txt"))["metrics"]; assert [x["name"] for x in m] == ["kept"], m'

# The name is free again, with an empty history: the old report ids are not duplicates.
DENIABLE_TOKEN=$analyst expect_exit 0 "${cli[@]}" create-metric --name=doomed --design=two_coin
submit doomed A >submit.json
python3 -c 'import json; r=json.load(open("submit.json")); assert int(r["accepted"]) == 2, r'

# Over HTTP/JSON and with --yes: NOT_FOUND for a metric that does not exist (exit 3).
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $analyst" \
  -H 'Content-Type: application/json' "$H/v1/QueryService/DeleteMetric" -d '{"metric":"doomed"}')" = 200 ]
DENIABLE_TOKEN=$analyst expect_exit 3 "${cli[@]}" delete-metric doomed --yes --json
python3 -c 'import json; e=json.load(open("out.txt"))["error"]; assert e["code"]=="NOT_FOUND", e'
echo "delete-metric: OK"
