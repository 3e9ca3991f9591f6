#!/usr/bin/env bash
# The CLI against a hardened server: TLS with a test CA made here, bearer tokens with roles.
# Checks that a reporter token can replay but not query (PERMISSION_DENIED), an analyst token can
# create and query, no token is UNAUTHENTICATED, and plaintext is refused by the TLS port with a
# hint about --tls_ca_file; gRPC's own log lines stay off stderr unless GRPC_VERBOSITY is set.
# Usage: cli_tls_token_test.sh SERVER_BINARY CLI_BINARY CSV
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
server_bin=$1 cli_bin=$2 csv=$3
enter_work_dir
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=deniable-test-ca \
  -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
  -extfile san.ext -out server.crt 2>/dev/null

reporter=$("$server_bin" tokens add --role=reporter --label=test-app --db=deniable.db 2>/dev/null)
analyst=$("$server_bin" tokens add --role=analyst --label=test-analyst --db=deniable.db 2>/dev/null)
"$server_bin" --listen=127.0.0.1:0 --db=deniable.db --tls_cert_file=server.crt \
  --tls_key_file=server.key >server.log 2>&1 &
server_pid=$!
port=$(wait_for_port server.log "$server_pid")
cli=("$cli_bin" --target="127.0.0.1:$port" --tls_ca_file=ca.crt)

expect_fail() {  # expect_fail CODE COMMAND...: the command fails and stderr names CODE
  local code=$1; shift
  if "$@" 2>err.txt >/dev/null; then echo "unexpected success: $*"; exit 1; fi
  grep -q "$code" err.txt || { echo "expected $code from: $*"; cat err.txt; exit 1; }
}

"${cli[@]}" health  # no token needed
expect_fail UNAUTHENTICATED "${cli[@]}" list-metrics
DENIABLE_TOKEN=$reporter expect_fail PERMISSION_DENIED "${cli[@]}" \
  create-metric --name=chile_vote_yes --design=two_coin
DENIABLE_TOKEN=$analyst "${cli[@]}" create-metric --name=chile_vote_yes --design=two_coin >/dev/null
# The replay submits with the reporter token; its closing query needs the analyst role.
DENIABLE_TOKEN=$reporter expect_fail PERMISSION_DENIED "${cli[@]}" replay --metric=chile_vote_yes \
  --csv="$csv" --column=vote --yes=Y
DENIABLE_TOKEN=$analyst "${cli[@]}" prevalence --metric=chile_vote_yes --json >prevalence.json
python3 - prevalence.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert int(p["n"]) == 2532, p["n"]
print("n = 2532 over TLS with tokens")
PY
expect_fail UNAVAILABLE "$cli_bin" --target="127.0.0.1:$port" --timeout_seconds=2 health
# Plaintext against the TLS port says the server may require TLS and names the flag (issue 38).
grep -q 'may require TLS: give --tls_ca_file' err.txt || { echo "no TLS hint:"; cat err.txt; exit 1; }
# A CA that did not sign the server's certificate: the command's error only, none of gRPC's own
# log lines ("E1201 ... Handshake failed"), unless GRPC_VERBOSITY asks for them.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other-ca -keyout other.key \
  -out other.crt 2>/dev/null
expect_fail UNAVAILABLE "$cli_bin" --target="127.0.0.1:$port" --tls_ca_file=other.crt \
  --timeout_seconds=2 health
if grep -v '^deniable: ' err.txt | grep -q .; then echo "gRPC's log reached stderr:"; cat err.txt; exit 1; fi
GRPC_VERBOSITY=ERROR expect_fail UNAVAILABLE "$cli_bin" --target="127.0.0.1:$port" \
  --tls_ca_file=other.crt --timeout_seconds=2 health
grep -q 'Handshake failed' err.txt || { echo "GRPC_VERBOSITY=ERROR shows no gRPC log:"; cat err.txt; exit 1; }
echo "cli over TLS with tokens: OK"
