#!/usr/bin/env python3
"""`deniable tail` with the real server and CLI (CTest cli_tail; issue 30, "first report visible"):

1. Two tails run in the background (every metric as --json; one metric as text) while
   `deniable replay` sends 3 reports of a new metric, then 2 more and 4 of a second metric.
   Each prints the first arrival once, "+N reports (total T)" lines whose N add up to the
   reports sent and whose last total is the count, and only the metrics it watches.
2. Nothing printed carries an answer: no "yes", no bit, no estimate; a JSON line has exactly
   the arrival fields.
3. --count=N stops after N polls (exit 0); an unknown --metric exits 3 (NOT_FOUND); no server
   exits 4 (UNAVAILABLE); a bad --interval or --count is a usage error (exit 2).

Usage: tail_test.py SERVER_BINARY CLI_BINARY
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from test_server import start_server  # noqa: E402
from checks import check, eventually  # noqa: E402

LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  (\S+)  \+(\d+) reports? \(total (\d+)\)"
                  r"(  first report of (\S+) arrived)?$")
JSON_KEYS = {"time", "metric", "newReports", "totalReports", "newRejected", "first"}


def read(path):
    with open(path) as f:
        return f.read()


def text_arrivals(path):
    """(metric, new, total, first) of each text line."""
    out = []
    for line in read(path).splitlines():
        m = LINE.match(line)
        check(m is not None, f"unexpected tail line: {line!r}")
        check(m.group(5) in (None, m.group(1)), f"first arrival names another metric: {line!r}")
        out.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4) is not None))
    return out


def json_arrivals(path):
    out = []
    for line in read(path).splitlines():
        obj = json.loads(line)
        check(set(obj) == JSON_KEYS, f"JSON fields {sorted(obj)}")
        out.append((obj["metric"], obj["newReports"], obj["totalReports"], obj["first"]))
    return out


def total(arrivals, metric):
    """The last printed total of `metric` (0 if none)."""
    totals = [t for m, _, t, _ in arrivals if m == metric]
    return totals[-1] if totals else 0


def check_metric(arrivals, metric, sent, first_expected):
    """The lines of `metric` add up to `sent` new reports, end at total `sent`... and say "first"
    exactly once (on the first line) when `first_expected`."""
    lines = [a for a in arrivals if a[0] == metric]
    check(sum(n for _, n, _, _ in lines) == sent, f"{metric}: +N adds to {sent}: {lines}")
    check(lines and lines[-1][2] == sent, f"{metric}: last total {sent}: {lines}")
    firsts = [i for i, a in enumerate(lines) if a[3]]
    check(firsts == ([0] if first_expected else []), f"{metric}: first arrival lines {lines}")


def main():
    server_bin, cli = (os.path.abspath(a) for a in sys.argv[1:3])
    work = tempfile.mkdtemp(prefix="deniable_tail_")
    server, target = start_server(server_bin, os.path.join(work, "s.db"),
                                  os.path.join(work, "s.log"), "--default_min_reports=1")
    tails = []

    def run(*args):
        return subprocess.run([cli, f"--target={target}", *args], capture_output=True, text=True,
                              timeout=60, cwd=work)

    def start_tail(name, *args):
        out, err = os.path.join(work, name + ".out"), os.path.join(work, name + ".err")
        proc = subprocess.Popen([cli, f"--target={target}", "tail", "--interval=50ms", *args],
                                stdout=open(out, "w"), stderr=open(err, "w"))
        tails.append(proc)
        eventually(lambda: "watching" in read(err), 10, f"tail {name} started: {read(err)}")
        return out

    def replay(metric, rows):
        csv = os.path.join(work, metric + ".csv")
        with open(csv, "w") as f:
            f.write("answer\n" + "".join(f"{'yes' if i % 2 else 'no'}\n" for i in range(rows)))
        r = run("replay", f"--metric={metric}", f"--csv={csv}", "--column=answer", "--yes=yes")
        check(r.returncode == 0, f"replay {metric}: {r.returncode} {r.stdout} {r.stderr}")

    try:
        for m in ("first_metric", "second_metric"):
            r = run("create-metric", f"--name={m}", "--design=two_coin", "--min_reports=1")
            check(r.returncode == 0, f"create-metric {m}: {r.stderr}")
        every = start_tail("every", "--json")
        one = start_tail("one", "--metric=first_metric")

        # 1. The first reports of first_metric.
        replay("first_metric", 3)
        eventually(lambda: total(text_arrivals(one), "first_metric") == 3, 10,
                   f"tail shows 3 reports of first_metric: {read(one)}")
        check_metric(text_arrivals(one), "first_metric", 3, first_expected=True)

        # More of it, and the first of another metric the text tail does not watch.
        replay("first_metric", 2)
        replay("second_metric", 4)
        eventually(lambda: total(json_arrivals(every), "second_metric") == 4
                   and total(json_arrivals(every), "first_metric") == 5, 10,
                   f"the JSON tail shows both metrics: {read(every)}")
        eventually(lambda: total(text_arrivals(one), "first_metric") == 5, 10,
                   f"tail shows 5 reports of first_metric: {read(one)}")
        for proc in tails:
            proc.terminate()
            proc.wait(timeout=10)
        text, js = text_arrivals(one), json_arrivals(every)
        check_metric(text, "first_metric", 5, first_expected=True)
        check({a[0] for a in text} == {"first_metric"}, f"--metric filters: {text}")
        check_metric(js, "first_metric", 5, first_expected=True)
        check_metric(js, "second_metric", 4, first_expected=True)

        # 2. Arrivals only.
        for path in (one, every):
            printed = read(path).lower()
            for word in ("yes", "bit", "estimate", "prevalence"):
                check(word not in printed, f"tail printed {word!r}: {printed}")

        # 3. --count, and the errors with their exit codes.
        r = run("tail", "--count=2", "--interval=10ms")
        check(r.returncode == 0 and r.stdout == "", f"--count=2: {r.returncode} {r.stdout!r}")
        check("watching every metric" in r.stderr, r.stderr)
        r = run("tail", "--metric=first_metric,nope", "--count=1")
        check(r.returncode == 3 and "no metric \"nope\"" in r.stderr, f"{r.returncode} {r.stderr}")
        for flag in ("--interval=0s", "--count=-1"):
            r = run("tail", flag)
            check(r.returncode == 2 and flag.split("=")[0] in r.stderr, f"{flag}: {r.stderr}")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed = f"127.0.0.1:{s.getsockname()[1]}"
        r = subprocess.run([cli, f"--target={closed}", "--timeout_seconds=2", "tail", "--count=1"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 4, f"no server: exit {r.returncode} {r.stderr}")
        print("tail: first arrivals, counts, filter, --json, --count and errors as documented")
    finally:
        for proc in tails:
            if proc.poll() is None:
                proc.kill()
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
