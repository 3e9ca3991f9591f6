#!/usr/bin/env python3
"""`deniable replay` with the real server and CLI (CTest replay_times_progress):

1. --spread=7d, stderr piped: no progress text at all; the 280 reports fill the last 7 days
   (36 minutes apart: every hour holds 1 or 2 of them), none in the future.
2. --time_column with --time_format: each respondent counted on its own day (exact per-day n).
3. On a terminal (stderr a pty): a progress line with rate and ETA, redrawn with "\\r", ending
   at 100 %; stdout (the summary) stays clean.
4. Bad input names the flag or the record, exits 2 and stores nothing.

Usage: replay_times_progress_test.py SERVER_BINARY CLI_BINARY
"""
import json
import os
import pty
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from test_server import start_server  # noqa: E402
from checks import check  # noqa: E402

DAY = 86400


def main():
    server_bin, cli = sys.argv[1:3]
    work = tempfile.mkdtemp(prefix="deniable_replay_times_")
    server, target = start_server(server_bin, os.path.join(work, "s.db"),
                                  os.path.join(work, "s.log"))

    def run(*args, **kw):
        return subprocess.run([cli, f"--target={target}", *args], capture_output=True,
                              text=True, timeout=120, **kw)

    try:
        for m in ("spread", "dated", "tty"):
            out = run("create-metric", f"--name={m}", "--design=two_coin", "--min_reports=1")
            check(out.returncode == 0, out.stderr)
        survey = os.path.join(work, "survey.csv")
        today = int(time.time()) // DAY * DAY
        days = [today - k * DAY for k in (9, 8, 8, 5, 5, 5)]
        with open(survey, "w") as f:
            f.write("vote,day\n")
            for i in range(280):
                day = days[i % len(days)]
                f.write(f"{'Y' if i % 3 == 0 else 'N'},"
                        f"{time.strftime('%Y-%m-%d', time.gmtime(day))}\n")

        # 1. Spread, piped.
        now = time.time()
        out = run("replay", "--metric=spread", f"--csv={survey}", "--column=vote", "--yes=Y",
                  "--spread=7d")
        check(out.returncode == 0, out.stderr)
        check("respondents (" not in out.stderr and "\r" not in out.stderr, out.stderr)
        # A periodic metric: replay says how a survey question gets its respondents' interval.
        check("--reporting_period=once" in out.stderr, out.stderr)
        check("\r" not in out.stdout, out.stdout)
        series = run("series", "--metric=spread", f"--start={int(now) - 8 * DAY}",
                     f"--end={int(now) + 3600}", "--bucket=hour", "--json")
        check(series.returncode == 0, series.stderr)
        buckets = json.loads(series.stdout).get("buckets", [])
        starts = [int(b["startTimeSeconds"]) for b in buckets]
        check(sum(int(b["n"]) for b in buckets) == 280, buckets)
        check(min(starts) >= now - 7 * DAY - 3600 and max(starts) <= now, (min(starts), now))
        # 280 answers 36 minutes apart over 168 hours: every hour holds 1 or 2.
        check(len(buckets) >= 167 and max(int(b["n"]) for b in buckets) <= 2, buckets)
        print(f"--spread=7d: {len(buckets)} hourly buckets of 1 or 2 reports")

        # 1b. A survey into a metric that does not exist yet: replay creates it as a survey
        # question (reporting_period=once), so the spread answers are counted as respondents.
        out = run("replay", "--metric=survey_new", f"--csv={survey}", "--column=vote", "--yes=Y",
                  "--spread=28d", "--json")
        check(out.returncode == 0, out.stderr)
        check('created metric "survey_new" as a survey question' in out.stderr, out.stderr)
        check("--reporting_period=once" not in out.stderr, out.stderr)  # no periodic-metric note
        prevalence = json.loads(out.stdout)
        check(int(prevalence["n"]) == 280 and prevalence.get("window") == "once", prevalence)
        listed = run("list-metrics", "--json")
        check(listed.returncode == 0, listed.stderr)
        made = [m for m in json.loads(listed.stdout)["metrics"] if m["name"] == "survey_new"]
        check(len(made) == 1 and made[0].get("reportingOnce") is True, made)
        check("twoCoin" in json.dumps(made[0]), made)
        # Categories cannot be guessed: a missing categorical metric needs --categories.
        out = run("replay", "--metric=survey_cat", f"--csv={survey}", "--column=vote")
        check(out.returncode == 2 and "--categories" in out.stderr, out.stderr)
        print("replay into a missing metric: created as a survey question, n = 280 respondents")

        # 2. A time column.
        out = run("replay", "--metric=dated", f"--csv={survey}", "--column=vote", "--yes=Y",
                  "--time_column=day", "--time_format=%Y-%m-%d")
        check(out.returncode == 0, out.stderr)
        series = run("series", "--metric=dated", f"--start={today - 10 * DAY}",
                     f"--end={today + DAY}", "--bucket=day", "--json")
        got = {int(b["startTimeSeconds"]): int(b["n"])
               for b in json.loads(series.stdout).get("buckets", [])}
        want = {}
        for i in range(280):
            want[days[i % len(days)]] = want.get(days[i % len(days)], 0) + 1
        check(got == want, (got, want))
        print(f"--time_column: per day {sorted(got.values())}")

        # 3. On a terminal.
        master, slave = pty.openpty()
        proc = subprocess.Popen([cli, f"--target={target}", "replay", "--metric=tty",
                                 f"--csv={survey}", "--column=vote", "--yes=Y"],
                                stdout=subprocess.PIPE, stderr=slave, text=True)
        os.close(slave)
        terminal = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            terminal += chunk
        stdout = proc.stdout.read()
        check(proc.wait(timeout=120) == 0, terminal)
        os.close(master)
        text = terminal.decode()
        check("\rreplay: 280/280 respondents (100.0 %)" in text, text)
        check("/s, ETA " in text and text.endswith("\n"), text)
        check("respondents (" not in stdout, stdout)
        print(f"terminal: {text.count(chr(13))} redraws, last: "
              f"{text.strip().split(chr(13))[-1].replace(chr(27) + '[K', '')!r}")

        # 4. Bad input.
        for args, needle in ((["--spread=7w"], "spread"),
                             (["--spread=7d", "--time_column=day"], "not both"),
                             (["--time_column=day", "--time_format=%d/%m/%Y"], "record 2"),
                             (["--time_column=when"], "time_column")):
            out = run("replay", "--metric=spread", f"--csv={survey}", "--column=vote",
                      "--yes=Y", *args)
            check(out.returncode == 2 and needle in out.stderr, (args, out.returncode,
                                                                  out.stderr))
        n = json.loads(run("prevalence", "--metric=spread", "--json").stdout)["n"]
        check(n == "280", n)
    finally:
        server.terminate()
        server.wait(timeout=30)
    subprocess.run(["rm", "-rf", work])
    print("replay times and progress: OK")


if __name__ == "__main__":
    main()
