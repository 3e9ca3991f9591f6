#!/usr/bin/env python3
"""Historical import with the real server and CLI (CTest historical_import; issue 17, replay):

1. `deniable replay --import` with an analyst token loads a survey answered three years ago
   (three days, --time_column) into a collector started with --max_import_age_seconds of 5
   years; the series shows exactly those three days with their counts.
2. Re-running the same import adds nothing: every report is a duplicate, n stays exact.
3. The same import with a reporter token (what devices hold) is refused whole with
   PERMISSION_DENIED naming x-deniable-import (exit 5), and stores nothing.
4. Over HTTP/JSON: a 3-year-old report without the header is rejected as too old (the normal
   limit); with the header and a reporter token 403; with an analyst token it is stored.
5. A token-less --import and an --import without times are usage errors naming --import.
6. /metrics counts the imported reports (accepted and duplicate); the access log marks the
   import calls with import=true and logs who imported (event=historical_import token_id=...).

Usage: historical_import_test.py SERVER_BINARY CLI_BINARY
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from test_server import start_collector  # noqa: E402
from checks import check  # noqa: E402

DAY = 86400
FIVE_YEARS = 5 * 365 * DAY


def post(http, method, body, token, import_header=None):
    """POST /v1/<method>; returns (HTTP status, parsed JSON body)."""
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    if import_header is not None:
        headers["X-Deniable-Import"] = import_header
    request = urllib.request.Request(f"{http}/v1/{method}", data=json.dumps(body).encode(),
                                     headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def main():
    server_bin, cli = sys.argv[1:3]
    work = tempfile.mkdtemp(prefix="deniable_import_")
    db = os.path.join(work, "s.db")

    def add_token(role):
        out = subprocess.run([server_bin, "tokens", "add", f"--role={role}", "--label=t",
                              f"--db={db}"], capture_output=True, text=True, check=True)
        return out.stdout.strip()

    analyst, reporter = add_token("analyst"), add_token("reporter")
    log_path = os.path.join(work, "s.log")
    server, target, http = start_collector(server_bin, db, log_path,
                                           f"--max_import_age_seconds={FIVE_YEARS}",
                                           "--access_log=true")

    def run(*args, token=analyst):
        env = dict(os.environ)
        env.pop("DENIABLE_TOKEN", None)
        token_flag = [f"--token={token}"] if token else []
        return subprocess.run([cli, f"--target={target}", *token_flag, *args],
                              capture_output=True, text=True, timeout=120, env=env)

    def n_of(metric):
        out = run("prevalence", f"--metric={metric}", "--json")
        if out.returncode == 6 and "has 0 reports" in out.stderr:
            return 0
        check(out.returncode == 0, out.stderr)
        return int(json.loads(out.stdout)["n"])

    try:
        out = run("create-metric", "--name=survey", "--design=two_coin", "--min_reports=1")
        check(out.returncode == 0, out.stderr)
        today = int(time.time()) // DAY * DAY
        first = today - 3 * 365 * DAY
        days = [first, first + 30 * DAY, first + 61 * DAY]
        counts = {days[0]: 20, days[1]: 15, days[2]: 25}
        csv = os.path.join(work, "survey.csv")
        with open(csv, "w") as f:
            f.write("vote,day\n")
            i = 0
            for day, count in counts.items():
                for _ in range(count):
                    f.write(f"{'Y' if i % 3 == 0 else 'N'},"
                            f"{time.strftime('%Y-%m-%d', time.gmtime(day))}\n")
                    i += 1
        total = sum(counts.values())
        replay = ["replay", "--metric=survey", f"--csv={csv}", "--column=vote", "--yes=Y",
                  "--time_column=day", "--import"]

        # 3 first: a reporter token is refused whole and nothing is stored.
        out = run(*replay, token=reporter)
        check(out.returncode == 5, (out.returncode, out.stderr))
        check("PERMISSION_DENIED" in out.stderr and "x-deniable-import" in out.stderr, out.stderr)
        check(n_of("survey") == 0)
        print(f"reporter token: exit 5, {out.stderr.strip().splitlines()[-1][:110]}...")

        # 1. The import.
        out = run(*replay)
        check(out.returncode == 0, (out.returncode, out.stdout, out.stderr))
        check(n_of("survey") == total)
        series = run("series", "--metric=survey", f"--start={first - DAY}",
                     f"--end={days[-1] + DAY}", "--bucket=day", "--json")
        check(series.returncode == 0, series.stderr)
        got = {int(b["startTimeSeconds"]): int(b["n"])
               for b in json.loads(series.stdout).get("buckets", [])}
        check(got == counts, (got, counts))
        print(f"import: {total} reports from 3 years ago, per day {sorted(got.values())}")

        # 2. The same import again: nothing new.
        out = run(*replay)
        check(out.returncode == 0, (out.returncode, out.stdout, out.stderr))
        check(n_of("survey") == total, "a repeated import added reports")
        print(f"re-run: n stays {total}")

        # 4. HTTP/JSON.
        def report(id_byte, t):
            return {"reports": [{"metric": "survey", "designVersion": 1, "bit": 1,
                                 "reportId": base64.b64encode(bytes([id_byte]) * 16).decode(),
                                 "eventTimeSeconds": str(t)}]}
        status, body = post(http, "ReportService/SubmitReports", report(1, first), reporter)
        check(status == 200 and len(body.get("rejections", [])) == 1, (status, body))
        check("too old" in body["rejections"][0]["reason"], body)
        status, body = post(http, "ReportService/SubmitReports", report(1, first), reporter,
                            "historical")
        check(status == 403 and "x-deniable-import" in json.dumps(body), (status, body))
        status, body = post(http, "ReportService/SubmitReports", report(1, first), analyst,
                            "historical")
        check(status == 200 and body["accepted"] == 1, (status, body))
        status, body = post(http, "ReportService/SubmitReports", report(1, first), analyst,
                            "historical")
        check(status == 200 and body["accepted"] == 0 and body["duplicates"] == 1, body)
        check(n_of("survey") == total + 1)
        print("HTTP/JSON: too old without the header, 403 for a reporter, stored once for an "
              "analyst")

        # 5. Usage errors.
        for token, flags, needle in ((None, [], "--token"),
                                     (analyst, ["--time_column="], "--time_column")):
            args = [a for a in replay if a != "--time_column=day"] + flags
            out = run(*args, token=token)
            check(out.returncode == 2 and "--import" in out.stderr and needle in out.stderr, (
                out.returncode, out.stderr))

        # 6. Counters and logs.
        with urllib.request.urlopen(f"{http}/metrics", timeout=30) as response:
            metrics = response.read().decode()

        def counter(outcome):
            m = re.search(r'deniable_imported_reports_total\{[^}]*metric="survey"[^}]*outcome="'
                          + outcome + r'"[^}]*\} (\S+)', metrics)
            check(m, metrics)
            return float(m.group(1))
        check(counter("accepted") == total + 1, counter("accepted"))
        check(counter("duplicate") == total + 1, counter("duplicate"))
        with open(log_path) as f:
            log = f.read()
        import_lines = [line for line in log.splitlines()
                        if "event=access" in line and "import=true" in line]
        # 2 x total analyst calls, 1 + several retried reporter calls, 3 HTTP calls.
        check(len(import_lines) >= 2 * total + 3, len(import_lines))
        check(re.search(r"event=access transport=http method=deniable.v1.ReportService/"
                         r"SubmitReports code=PERMISSION_DENIED .*import=true", log), log)
        check(re.search(r"event=historical_import method=SubmitReports token_id=\d+ accepted=1",
                         log), log)
        check(not any("import=true" in line for line in log.splitlines()
                       if "event=access" in line and "QueryService" in line))
        print(f"/metrics: {counter('accepted'):.0f} imported, {counter('duplicate'):.0f} "
              f"duplicates; {len(import_lines)} access lines with import=true")
    finally:
        server.terminate()
        server.wait(timeout=30)
    subprocess.run(["rm", "-rf", work])
    print("historical import: OK")


if __name__ == "__main__":
    main()
