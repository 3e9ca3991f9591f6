# Shell helpers for tests that run the real deniable-server. Source it:
#   . "$(dirname "$0")/lib/server.sh"
# wait_for_port LOG PID: prints the port the server logged in its event=start line, text or JSON
# (it listens on port 0, so the kernel picks a free one); fails with the log if the server exits
# or takes longer than 5 s.
wait_for_port() {
  local log=$1 pid=$2 port=
  for _ in $(seq 250); do
    port=$(sed -n -e 's/.*event=start .* port=\([0-9][0-9]*\) .*/\1/p' \
      -e 's/.*"event":"start".*"port":\([0-9][0-9]*\).*/\1/p' "$log" | head -n1)
    if [ -n "$port" ]; then echo "$port"; return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  echo "the server did not start:" >&2
  cat "$log" >&2
  return 1
}

# wait_until SECONDS CMD...: runs CMD every 0.05 s until it succeeds (returns 0) or SECONDS have
# passed (returns 1). A test waits for the event it needs (a log line, a file's first line)
# instead of sleeping for a guessed time and then asserting.
wait_until() {
  local seconds=$1; shift
  local deadline=$(( $(date +%s%N) + seconds * 1000000000 ))
  until "$@"; do
    [ "$(date +%s%N)" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

# Makes a temporary directory $work and enters it; on exit, stops the server in $server_pid (if
# one was started) and removes the directory.
enter_work_dir() {
  work=$(mktemp -d)
  server_pid=
  trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
  cd "$work"
}

# SQL for the sqlite3 shell that attaches the collector database DB's keyed reports file and
# creates the TEMP view stored_reports (every stored report once; server/storage/
# sqlite_keyed_file.h, whose kStoredReportsViewSql is tests/lib/stored_reports.sql).
# Usage: sqlite3 "$db" <<SQL
#        $(stored_reports_sql "$db")
#        SELECT count(*) FROM stored_reports;
#        SQL
stored_reports_sql() {
  printf "ATTACH '%s-reports' AS keyed;\n" "$(realpath "$1")"
  cat "$(dirname "${BASH_SOURCE[0]}")/stored_reports.sql"
}
