#!/usr/bin/env bash
# What an operator meets first (issue 38): the admin subcommands on a mistyped database path fail
# with NOT_FOUND naming the file and create none (tokens list/revoke, backup); a TLS file the
# server cannot read is named, with the reason and the uid that must read it.
# Usage: operator_errors_test.sh SERVER_BINARY
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
server_bin=$1
enter_work_dir
unset DENIABLE_DB || true

expect_exit() {  # expect_exit CODE COMMAND...: the command exits with CODE
  local want=$1; shift
  set +e; "$@" >out.txt 2>err.txt; local got=$?; set -e
  if [ "$got" != "$want" ]; then
    echo "expected exit $want, got $got from: $*"; cat out.txt err.txt; exit 1
  fi
}

# A missing database: NOT_FOUND naming it, and no file made (not even -wal or -journal).
for command in "tokens list" "tokens revoke --id=1"; do
  # shellcheck disable=SC2086
  expect_exit 1 "$server_bin" $command --db=typo.db
  grep -q 'NOT_FOUND: db: "typo.db" does not exist' err.txt || { echo "$command:"; cat err.txt; exit 1; }
  if ls typo.db* >/dev/null 2>&1; then echo "$command created $(ls typo.db*)"; exit 1; fi
done
expect_exit 1 "$server_bin" backup --db=typo.db --out=copy.db
grep -q 'typo.db' err.txt || { cat err.txt; exit 1; }
if ls typo.db* copy.db* >/dev/null 2>&1; then echo "backup created $(ls typo.db* copy.db*)"; exit 1; fi
# An unknown tokens subcommand: usage, and no database either.
expect_exit 2 "$server_bin" tokens lsit --db=typo.db
grep -q "usage: deniable-server tokens add|list|revoke" err.txt
if ls typo.db* >/dev/null 2>&1; then echo "tokens lsit created a file"; exit 1; fi

# tokens add still creates the database (as the server does), and list then reads it.
"$server_bin" tokens add --role=analyst --label=ops --db=new.db >/dev/null 2>&1
expect_exit 0 "$server_bin" tokens list --db=new.db
grep -q "analyst" out.txt

# TLS: the file that cannot be read, why, and the uid. A missing key, a directory as the
# certificate; and a key at mode 000 read by another user (runuser, when the test runs as root;
# as a non-root user, the test's own uid). The server logs the error (stdout, docs/docker.md).
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 -keyout key.pem \
  -out cert.pem >/dev/null 2>&1
serve() { "$server_bin" --listen=127.0.0.1:0 --db=tls.db "$@"; }
expect_exit 2 serve --tls_cert_file=cert.pem --tls_key_file=missing.pem
grep -q -- "--tls_key_file: cannot read \"missing.pem\": No such file or directory (this process runs as uid $(id -u)" out.txt err.txt \
  || { cat out.txt err.txt; exit 1; }
mkdir certdir
expect_exit 2 serve --tls_cert_file=certdir --tls_key_file=key.pem
grep -q -- "--tls_cert_file: cannot read \"certdir\": Is a directory" out.txt err.txt || { cat out.txt err.txt; exit 1; }
expect_exit 2 serve --tls_cert_file=cert.pem
grep -q -- "--tls_key_file is empty" out.txt err.txt || { cat out.txt err.txt; exit 1; }
chmod 000 key.pem
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
  chmod 755 "$work"  # nobody must reach the files in the work directory
  chmod 644 cert.pem
  set +e
  runuser -u nobody -- "$server_bin" --listen=127.0.0.1:0 --db="$work/tls.db" \
    --tls_cert_file="$work/cert.pem" --tls_key_file="$work/key.pem" >out.txt 2>err.txt
  got=$?; set -e
  [ "$got" = 2 ] || { echo "expected exit 2, got $got"; cat out.txt err.txt; exit 1; }
  grep -q -- "--tls_key_file: cannot read \"$work/key.pem\": Permission denied (this process runs as uid $(id -u nobody)" out.txt err.txt \
    || { cat out.txt err.txt; exit 1; }
elif [ "$(id -u)" != 0 ]; then
  expect_exit 2 serve --tls_cert_file=cert.pem --tls_key_file=key.pem
  grep -q -- "--tls_key_file: cannot read \"key.pem\": Permission denied (this process runs as uid $(id -u)" out.txt err.txt \
    || { cat out.txt err.txt; exit 1; }
fi

echo "operator_errors: ok"
