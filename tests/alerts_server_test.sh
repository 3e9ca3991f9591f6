#!/usr/bin/env bash
# Issue 41 alerts through the real server (docs/alerts.md): a bad --alert_rules file stops it with
# exit 2 naming the file and the field; with rules, a fleet whose share is clearly above the
# threshold makes the rule fire, seen on GET /v1/alerts, as deniable_alert_firing on /metrics and
# through gRPC (QueryService.ListAlerts) as `deniable alerts` prints it; a server without rules
# answers ListAlerts NOT_FOUND naming alert_rules (the CLI's exit 3).
# Usage: alerts_server_test.sh SERVER_BINARY CLI_BINARY
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
server_bin=$1
cli_bin=$2
enter_work_dir

expect_exit() {  # expect_exit CODE COMMAND...: the command exits with CODE
  local want=$1; shift
  set +e; "$@" >out.txt 2>err.txt; local got=$?; set -e
  if [ "$got" != "$want" ]; then
    echo "expected exit $want, got $got from: $*"; cat out.txt err.txt; exit 1
  fi
}

echo '{"rules": [{"name": "crash_high", "metric": "crash", "above": 0.3, "level": 1.5}]}' > bad.json
expect_exit 2 "$server_bin" --listen=127.0.0.1:0 --db=a.db --alert_rules=bad.json
grep -q -- '--alert_rules: bad.json: rules\[0\].level: must be in (0, 1), but is 1.5' out.txt err.txt \
  || { cat out.txt err.txt; exit 1; }
expect_exit 2 "$server_bin" --listen=127.0.0.1:0 --db=a.db --alert_rules=missing.json
grep -q -- '--alert_rules: missing.json: cannot read' out.txt err.txt || { cat out.txt err.txt; exit 1; }
expect_exit 2 "$server_bin" --listen=127.0.0.1:0 --db=a.db --alert_period_seconds=0
grep -q -- '--alert_period_seconds: must be >= 1' out.txt err.txt || { cat out.txt err.txt; exit 1; }

echo '{"rules": [{"name": "crash_high", "metric": "crash", "above": 0.3}]}' > rules.json
"$server_bin" --listen=127.0.0.1:0 --http_listen=127.0.0.1:0 --db=b.db --alert_rules=rules.json \
  --alert_period_seconds=1 >server.log 2>&1 &
server_pid=$!
wait_for_port server.log "$server_pid" >/dev/null
http_port=$(sed -n 's/.*event=start .* http_port=\([0-9][0-9]*\) .*/\1/p' server.log | head -n1)
H=http://127.0.0.1:$http_port
J='Content-Type: application/json'
curl -sf -H "$J" "$H/v1/QueryService/CreateMetric" -d '{"name":"crash","design":{"twoCoin":{}}}' >/dev/null
# 400 reports this hour, 360 with bit 1: through two coins, a prevalence of about 1.3 (clipped),
# far above 0.3.
python3 - >batch.json <<'PY'
import base64, json, time
hour = int(time.time()) // 3600 * 3600
reports = [{"metric": "crash", "designVersion": 1, "bit": 1 if i < 360 else 0,
            "reportId": base64.b64encode(i.to_bytes(16, "little")).decode(),
            "eventTimeSeconds": str(hour)} for i in range(400)]
print(json.dumps({"reports": reports}))
PY
curl -sf -H "$J" "$H/v1/ReportService/SubmitReports" -d @batch.json | grep -q '"accepted":400'
firing() { curl -sf "$H/v1/alerts" | grep -q '"rule":"crash_high".*"firing":true,"status":"ok"'; }
wait_until 30 firing || { curl -s "$H/v1/alerts"; cat server.log; exit 1; }
# To a file first: grep -q leaves at its first match, and curl writing the rest of a long page
# into the closed pipe fails the pipeline under pipefail.
curl -sf "$H/metrics" >metrics.txt
grep -q '^deniable_alert_firing{metric="crash",rule="crash_high"} 1' metrics.txt \
  || { grep alert metrics.txt; exit 1; }
grep -q 'event=alert_firing rule=crash_high metric=crash' server.log
grpc_port=$(sed -n 's/.*event=start .* port=\([0-9][0-9]*\) .*/\1/p' server.log | head -n1)
"$cli_bin" --target="127.0.0.1:$grpc_port" alerts >alerts.txt
grep -q '^crash_high (crash, prevalence above 0.3, level 0.95, windows of 86400 s): FIRING$' \
  alerts.txt || { cat alerts.txt; exit 1; }
grep -q '^  estimate .* anytime interval \[.*\] at level 0.969603645 (window 1, from ' alerts.txt \
  || { cat alerts.txt; exit 1; }
grep -q '^  status: ok; evaluated ' alerts.txt || { cat alerts.txt; exit 1; }
"$cli_bin" --target="127.0.0.1:$grpc_port" alerts --json >alerts.json
grep -q '"firing": true' alerts.json && grep -q '"windowNumber": "1"' alerts.json \
  || { cat alerts.json; exit 1; }
kill "$server_pid"; wait "$server_pid" || true

"$server_bin" --listen=127.0.0.1:0 --db=c.db >plain.log 2>&1 &
server_pid=$!
plain_port=$(wait_for_port plain.log "$server_pid")
expect_exit 3 "$cli_bin" --target="127.0.0.1:$plain_port" alerts
grep -q 'NOT_FOUND.*alert_rules: this server runs without --alert_rules' out.txt err.txt \
  || { cat out.txt err.txt; exit 1; }
echo "alerts_server: ok"
