#!/usr/bin/env bash
# CLI conventions (issue 17, docs/cli.md) with the real binaries: --help exits 0, --version on
# both binaries, a command rejects another command's flag naming it, exit codes tell usage,
# NOT_FOUND and UNAVAILABLE apart, --json covers health, stats and errors, and design and plan
# compute without a server, and the time flags take dates, RFC 3339 date-times, times before now
# and Unix seconds, with the default ranges of docs/cli.md (issue 29); differences print second
# minus first with their words and small groups "suppressed" (issue 29).
# Usage: cli_conventions_test.sh SERVER_BINARY CLI_BINARY
set -euo pipefail
. "$(dirname "$0")/lib/server.sh"
lib_dir=$(cd "$(dirname "$0")/lib" && pwd)
server_bin=$1 cli_bin=$2
enter_work_dir
unset DENIABLE_TOKEN DENIABLE_TARGET || true

expect_exit() {  # expect_exit CODE COMMAND...: the command exits with CODE
  local want=$1; shift
  set +e; "$@" >out.txt 2>err.txt; local got=$?; set -e
  if [ "$got" != "$want" ]; then
    echo "expected exit $want, got $got from: $*"; cat out.txt err.txt; exit 1
  fi
}

expect_exit 0 "$cli_bin" --help
grep -q "list-metrics" out.txt
expect_exit 0 "$cli_bin" series --help
grep -q -- "--bucket" out.txt
expect_exit 0 "$cli_bin" --version
grep -Eq '^deniable [0-9]+\.[0-9]+\.[0-9]+ ' out.txt
expect_exit 0 "$server_bin" --version
grep -Eq '^deniable-server [0-9]+\.[0-9]+\.[0-9]+ ' out.txt
[ "$(awk '{print $2}' out.txt)" = "$("$cli_bin" --version | awk '{print $2}')" ]

# The server's help: its flags, and the tokens subcommand's own (issue 29: "No flags matched").
expect_exit 0 "$server_bin" --help
grep -q -- "--listen" out.txt && ! grep -q "No flags matched" out.txt
expect_exit 0 "$server_bin" tokens --help
grep -q "tokens add --role=reporter|analyst" out.txt && grep -q -- "--id (tokens revoke" out.txt
! grep -q "No flags matched" out.txt && [ ! -e deniable.db ]  # help opens no database
# tokens list: created and revoked as RFC 3339 UTC.
before=$(date -u +%s)
"$server_bin" tokens add --role=analyst --label=ci --db=tokens.db >/dev/null 2>&1
"$server_bin" tokens revoke --id=1 --db=tokens.db >/dev/null
expect_exit 0 "$server_bin" tokens list --db=tokens.db
python3 - out.txt "$before" <<'PY'
import datetime, sys
header, row = open(sys.argv[1]).read().splitlines()
assert header.split("\t") == ["id", "role", "created", "revoked", "label"], header
_, role, created, revoked, label = row.split("\t")
for t in (created, revoked):
    when = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    assert int(sys.argv[2]) - 1 <= when.timestamp() <= datetime.datetime.now().timestamp() + 1, t
assert (role, label) == ("analyst", "ci"), row
PY

# Usage errors: exit 2, naming the flag; with --json the error is JSON on stdout.
expect_exit 2 "$cli_bin" series --metric=m --group_by=region
grep -q -- "--group_by is not a flag of this command" err.txt
expect_exit 2 "$cli_bin" nonsense
expect_exit 2 "$cli_bin" series --metric=m --group_by=region --json
python3 -c 'import json,sys; e=json.load(open("out.txt"))["error"]; assert e["code"]=="INVALID_ARGUMENT" and e["exitCode"]==2, e'

# Pure math without a server (nothing listens on port 1).
expect_exit 0 "$cli_bin" --target=127.0.0.1:1 design --design=two_coin --prior=0.3
expect_exit 0 "$cli_bin" --target=127.0.0.1:1 plan --design=two_coin --half_width=0.03 --json
python3 -c 'import json; p=json.load(open("out.txt")); assert int(p["reportsNeeded"]) > 0, p'
# UNAVAILABLE: exit 4, also as JSON.
expect_exit 4 "$cli_bin" --target=127.0.0.1:1 --timeout_seconds=2 health --json
python3 -c 'import json; e=json.load(open("out.txt"))["error"]; assert e["code"]=="UNAVAILABLE" and e["exitCode"]==4, e'

"$server_bin" --listen=127.0.0.1:0 --db=deniable.db --default_min_reports=1 >server.log 2>&1 &
server_pid=$!
port=$(wait_for_port server.log "$server_pid")
cli=("$cli_bin" --target="127.0.0.1:$port")
expect_exit 0 "${cli[@]}" health --json
python3 -c 'import json; h=json.load(open("out.txt")); assert h["status"]=="SERVING", h'
expect_exit 3 "${cli[@]}" prevalence --metric=no_such_metric
grep -q NOT_FOUND err.txt
expect_exit 0 "${cli[@]}" stats --json
python3 -c 'import json; s=json.load(open("out.txt")); assert "reportsAccepted" in s, s'
expect_exit 0 "${cli[@]}" stats
grep -q "reports_accepted" out.txt

# Time flags (issue 29): three reports at "now", queried over ranges written as people write them.
expect_exit 0 "${cli[@]}" create-metric --name=timed --design=two_coin
printf 'answer\nyes\nno\nyes\n' >answers.csv
expect_exit 0 "${cli[@]}" replay --metric=timed --csv=answers.csv --column=answer --yes=yes
window() {  # window FLAGS...: prints "start end n" of a prevalence over the flags' range
  expect_exit 0 "${cli[@]}" prevalence --metric=timed --json "$@"
  python3 -c 'import json; p=json.load(open("out.txt")); print(p["startTimeSeconds"], p["endTimeSeconds"], p["n"])'
}
before=$(date +%s)
read -r start end n < <(window --start=-7d)
[ "$n" = 3 ] && [ "$end" = 0 ]
# 7 days before the CLI's "now", which lies between $before and the check.
[ "$start" -ge $((before - 7 * 86400)) ] && [ "$start" -le $(($(date +%s) - 7 * 86400)) ] ||
  { echo "--start=-7d gave start $start, not 7 days before $before"; exit 1; }
day=$(date -u -d '-3 days' +%F)
read -r start end n < <(window --start="$day" --end=now)
[ "$n" = 3 ] && [ "$start" = "$(date -u -d "$day" +%s)" ] && [ "$end" -ge "$before" ] ||
  { echo "--start=$day --end=now gave $start $end $n"; exit 1; }
read -r start end n < <(window --start="${day}T00:00:00+02:00" --end="$(date +%s)")
[ "$start" = "$(( $(date -u -d "$day" +%s) - 7200 ))" ] && [ "$n" = 3 ]
read -r start end n < <(window)  # no flags: every report
[ "$start" = 0 ] && [ "$end" = 0 ] && [ "$n" = 3 ]
# series: the last 30 days without flags (it used to refuse a missing start); 0 names the flag.
expect_exit 0 "${cli[@]}" series --metric=timed --json
python3 -c 'import json; b=json.load(open("out.txt"))["buckets"]; assert sum(int(x["n"]) for x in b) == 3, b'
expect_exit 0 "${cli[@]}" series --metric=timed --start=-2w --end=now --bucket=week
expect_exit 2 "${cli[@]}" series --metric=timed --start=0
grep -q -- "--start: a series needs a start" err.txt
# A bad value: exit 2, naming the flag and the accepted forms (also as JSON).
for bad in yesterday 2026-11-01T12:00:00 7d 11/01/2026; do
  expect_exit 2 "${cli[@]}" prevalence --metric=timed --start="$bad"
  grep -q -- "--start: \"$bad\" is not a time; use a date (2026-11-01" err.txt
  grep -q -- "-7d" err.txt && grep -q "Unix seconds" err.txt
done
expect_exit 2 "${cli[@]}" difference --metric=timed --end2=soon --json
python3 -c 'import json; e=json.load(open("out.txt"))["error"]; assert e["exitCode"]==2 and "--end2" in e["message"], e'

# Differences and suppressed groups (issue 29): the change printed as second minus first (the
# wire's difference is first minus second), with its words; a group below min_reports says
# "suppressed" where its estimate would be.
yday=$(date -u -d '-1 day' +%F) today=$(date -u +%F)
{
  echo "answer,region,day"
  for i in $(seq 20); do echo "$([ $((i % 2)) = 0 ] && echo yes || echo no),N,$yday"; done
  for i in $(seq 20); do echo "$([ $((i % 4)) = 0 ] && echo yes || echo no),S,$today"; done
  echo "yes,X,$today"; echo "no,X,$today"
} >windows.csv
expect_exit 0 "${cli[@]}" create-metric --name=windows --design=two_coin --min_reports=5
expect_exit 0 "${cli[@]}" replay --metric=windows --csv=windows.csv --column=answer --yes=yes \
  --label_columns=region --time_column=day
expect_exit 0 "${cli[@]}" prevalence --metric=windows --group_by=region
grep -Eq '^X +2 suppressed +\(too few reports\)' out.txt || { cat out.txt; exit 1; }
# One end for both runs below (the JSON's and the text's): "now" resolved twice can differ by a
# second, and the text's window lines are compared with the JSON's.
end2=$(( $(date -u +%s) + 1 ))
windows=(--metric=windows --start="$yday" --end="$today" --start2="$today" --end2="$end2")
expect_exit 0 "${cli[@]}" difference "${windows[@]}" --json
cp out.txt difference.json
expect_exit 0 "${cli[@]}" difference "${windows[@]}"
cat out.txt
python3 - difference.json out.txt "$lib_dir" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[3])
from checks import check
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
m = re.search(r"change +([-+]\d+\.\d\d) percentage points, second minus first: (.*) \(standard", text)
check(m, text)
change = -100 * d["difference"]  # the wire's is first - second
check(m.group(1) == f"{change:+.2f}", (m.group(1), change, text))
lo, hi = -100 * d["ciUpper"], -100 * d["ciLower"]
# An interval of the change that covers 0 says so (issue 38), as the dashboard does.
words = ("rose" if change > 0 else "fell") + f" by {abs(change):.2f} points" + \
    (" (the interval includes 0: no clear change)" if lo <= 0 <= hi else "")
check(m.group(2) == words or (abs(change) < 0.005 and m.group(2).startswith("unchanged")),
      (m.group(2), words))
check(f"[{lo:+.2f}, {hi:+.2f}] percentage points (Wald)" in text, (lo, hi, text))
# The windows as resolved (issue 38: --start=-7d printed no dates), in RFC 3339 UTC.
import datetime
def utc(s):
    return datetime.datetime.fromtimestamp(int(s), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
for side in ("first", "second"):
    p = d[side]
    line = f"{side + ' window':<20} {utc(p['startTimeSeconds'])} to {utc(p['endTimeSeconds'])} (UTC)"
    check(line in text, (line, text))
PY
# prevalence --start=-7d: the start it resolved to, between the clock before and after the call.
before=$(date -u +%s)
expect_exit 0 "${cli[@]}" prevalence --metric=windows --start=-7d
after=$(date -u +%s)
start=$(sed -n 's/^time range  *\([0-9T:Z-]*\) to the latest report (no end)$/\1/p' out.txt)
[ -n "$start" ] || { echo "no time range line:"; cat out.txt; exit 1; }
start=$(date -u -d "$start" +%s)
[ "$start" -ge $((before - 7 * 86400)) ] && [ "$start" -le $((after - 7 * 86400)) ] \
  || { echo "time range starts at $start, not 7 days before now"; cat out.txt; exit 1; }
echo "cli conventions: OK"
