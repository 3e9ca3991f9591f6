#!/usr/bin/env bash
# Access log and health per service (issue 17), on the real server with tokens, both listeners
# and JSON logs:
# - every finished call writes one access line (gRPC and HTTP: method, code, latency_ms, reports
#   received by report calls, http_status), and no line of the log holds a token or the peer's
#   address; --access_log=false writes none;
# - grpc.health.v1.Health answers for "", ReportService, QueryService and AdminService, the CLI's
#   `health --service=` asks for one (an unknown one exits 3), HTTP /healthz?service= gives the
#   same answers and /livez answers while the process runs; with the database file deleted under
#   the server, every service turns NOT_SERVING (exit 1, HTTP 503) while /livez stays 200.
# Usage: access_log_health_test.sh SERVER_BINARY CLI_BINARY CHILE_CSV
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
server_bin=$1 cli_bin=$2 csv=$3
enter_work_dir
# TLS (the SDK sends tokens only over TLS), with a test CA made here.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=deniable-test-ca \
  -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
  -extfile san.ext -out server.crt 2>/dev/null
curl() { command curl -s --cacert ca.crt "$@"; }

reporter=$("$server_bin" tokens add --role=reporter --label=devices --db=deniable.db 2>/dev/null)
analyst=$("$server_bin" tokens add --role=analyst --label=me --db=deniable.db 2>/dev/null)
"$server_bin" --listen=127.0.0.1:0 --http_listen=127.0.0.1:0 --db=deniable.db \
  --tls_cert_file=server.crt --tls_key_file=server.key --log_format=json >server.log 2>&1 &
server_pid=$!
port=$(wait_for_port server.log "$server_pid")
http_port=$(sed -n 's/.*"event":"start".*"http_port":\([0-9][0-9]*\).*/\1/p' server.log | head -n1)
H="https://127.0.0.1:$http_port"
cli=("$cli_bin" --target="127.0.0.1:$port" --tls_ca_file=ca.crt)

# Health per service, gRPC and HTTP.
for service in "" deniable.v1.ReportService deniable.v1.QueryService deniable.v1.AdminService; do
  [ "$("${cli[@]}" health --service="$service")" = SERVING ] || { echo "health $service"; exit 1; }
  [ "$(curl -o /dev/null -w '%{http_code}' "$H/healthz?service=$service")" = 200 ]
done
set +e; "${cli[@]}" health --service=deniable.v1.Nope >/dev/null 2>&1; rc=$?; set -e
[ "$rc" = 3 ] || { echo "health --service=deniable.v1.Nope: exit $rc, expected 3"; exit 1; }
[ "$(curl -o /dev/null -w '%{http_code}' "$H/healthz?service=deniable.v1.Nope")" = 404 ]
curl -f "$H/healthz" | grep -q '"SERVING"'
curl -f "$H/livez" | grep -q '"ALIVE"'

# Calls of every kind: gRPC queries and report calls (replay), HTTP reports and a refusal.
DENIABLE_TOKEN=$analyst "${cli[@]}" create-metric --name=chile_vote_yes --design=two_coin >/dev/null
DENIABLE_TOKEN=$reporter "${cli[@]}" replay --metric=chile_vote_yes --csv="$csv" --column=vote \
  --yes=Y >replay.txt 2>&1 || true  # stored; its closing query is refused to the reporter role
now=$(( $(date +%s) / 3600 * 3600 ))
body='{"reports":[{"metric":"chile_vote_yes","designVersion":1,"bit":1,"reportId":"AAECAwQFBgcICQoLDA0ODw==","eventTimeSeconds":"'$now'"},{"metric":"chile_vote_yes","designVersion":1,"bit":0,"reportId":"AQECAwQFBgcICQoLDA0ODw==","eventTimeSeconds":"'$now'"}]}'
curl -f -H "Authorization: Bearer $reporter" "$H/v1/ReportService/SubmitReports" -d "$body" \
  >/dev/null
[ "$(curl -o /dev/null -w '%{http_code}' -H "Authorization: Bearer not-a-token" \
  "$H/v1/QueryService/ListMetrics" -d '{}')" = 401 ]
curl -f "$H/metrics" >/dev/null
DENIABLE_TOKEN=$analyst "${cli[@]}" prevalence --metric=chile_vote_yes --json >prevalence.json

# The database file deleted under the running server: every service NOT_SERVING.
rm deniable.db
for _ in $(seq 100); do
  [ "$(curl -o /dev/null -w '%{http_code}' "$H/healthz")" = 503 ] && break
  sleep 0.05
done
for service in "" deniable.v1.ReportService deniable.v1.QueryService; do
  set +e; out=$("${cli[@]}" health --service="$service"); rc=$?; set -e
  [ "$rc" = 1 ] && [ "$out" = NOT_SERVING ] || { echo "health $service: $rc $out"; exit 1; }
  [ "$(curl -o reply.json -w '%{http_code}' "$H/healthz?service=$service")" = 503 ]
  grep -q '"NOT_SERVING"' reply.json
done
[ "$(curl -o /dev/null -w '%{http_code}' "$H/livez")" = 200 ]
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=

python3 - server.log prevalence.json "$reporter" "$analyst" <<'PY'
import json, re, sys
log, prevalence, tokens = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(log, encoding="utf-8").read()
for token in tokens:
    assert token not in text, "a token is in the log"
records = [json.loads(line) for line in text.splitlines()]
# The JSON log's fields as the text log's key=value strings (latency_ms=0.412, reports=2).
entries = [{k: (f"{v:.3f}" if k == "latency_ms" else str(v)) for k, v in r.items()
            if k not in ("time", "level", "msg")} for r in records if r.get("event") == "access"]
assert entries, records
for e in entries:
    m = json.dumps(e)
    assert re.fullmatch(r"\d+\.\d{3}", e["latency_ms"]), m
    assert "127.0.0.1" not in m and "ipv4" not in m and "ipv6" not in m and "peer" not in m, m
    assert set(e) <= {"event", "transport", "method", "code", "http_status", "latency_ms",
                      "reports"}, m
def find(**want):
    return [e for e in entries if all(e.get(k) == v for k, v in want.items())]
assert find(transport="grpc", method="deniable.v1.QueryService/CreateMetric", code="OK")
assert find(transport="grpc", method="grpc.health.v1.Health/Check", code="OK")
assert find(transport="grpc", method="grpc.health.v1.Health/Check", code="NOT_FOUND")
assert find(transport="grpc", method="deniable.v1.QueryService/GetPrevalence", code="OK")
# Replay's report calls: the reports received add up to the reports stored.
grpc_reports = sum(int(e["reports"]) for e in entries if e["transport"] == "grpc" and
                   e["method"].startswith("deniable.v1.ReportService/") and
                   e["method"] != "deniable.v1.ReportService/GetDesign" and e["code"] == "OK")
n = int(json.load(open(prevalence))["n"])
assert grpc_reports + 2 == n == 2534, (grpc_reports, n)
assert find(transport="http", method="deniable.v1.ReportService/SubmitReports", code="OK",
            http_status="200", reports="2")
assert find(transport="http", method="deniable.v1.QueryService/ListMetrics",
            code="UNAUTHENTICATED", http_status="401")
assert find(transport="http", method="/metrics", http_status="200")
assert find(transport="http", method="/healthz", code="UNAVAILABLE", http_status="503")
assert find(transport="http", method="/healthz", code="NOT_FOUND", http_status="404")
assert find(transport="http", method="/livez", http_status="200")
print(f"{len(entries)} access lines; {grpc_reports} reports over gRPC, 2 over HTTP")
PY

# --access_log=false: no access line.
"$server_bin" --listen=127.0.0.1:0 --db=quiet.db --access_log=false >quiet.log 2>&1 &
server_pid=$!
port=$(wait_for_port quiet.log "$server_pid")
"$cli_bin" --target="127.0.0.1:$port" health >/dev/null
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=
! grep -q "event=access" quiet.log || { echo "--access_log=false still logs calls"; exit 1; }
echo "access log and health: OK"
