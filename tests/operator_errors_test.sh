#!/usr/bin/env bash
# What an operator meets first (issue 38): the admin subcommands on a mistyped database path fail
# with NOT_FOUND naming the file and create none (tokens list/revoke, backup).
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

echo "operator_errors: ok"
