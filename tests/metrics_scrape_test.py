#!/usr/bin/env python3
"""/metrics right after start, and after calls (CTest metrics_scrape; issue 29):

1. Every metric the table of docs/operations.md names is in the first scrape of a restarted
   server (whose database holds one metric): the per-metric series of that metric, the
   unattributed metric="" ones, every gRPC method's call counter and latency histogram at
   code="OK"; every deniable counter and histogram count is 0.
2. The standard process collector series hold this process's figures (start time within the
   run, open fds within the limit, memory).
3. One ListMetrics call makes its histogram count 1 and its call counter 1 (and no other gRPC
   call counter moves); a refused call adds its own code's series.

Usage: metrics_scrape_test.py SERVER_BINARY CLI_BINARY
"""
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
from test_server import start_collector  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check  # noqa: E402

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LIST = 'method="deniable.v1.QueryService/ListMetrics"'


def scrape(http):
    with urllib.request.urlopen(f"{http}/metrics", timeout=10) as r:
        text = r.read().decode()
    samples, types, helps = {}, {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
        elif line.startswith("# HELP "):
            _, _, name, help_text = line.split(" ", 3)
            helps[name] = help_text
        elif line:
            m = SAMPLE.match(line)
            check(m, f"not a sample line: {line!r}")
            samples[(m.group(1), m.group(3) or "")] = float(m.group(4))
    return samples, types, helps


def documented():
    """The metric names of the table under "## Metrics" in docs/operations.md."""
    with open(os.path.join(HERE, "..", "docs", "operations.md")) as f:
        section = f.read().split("## Metrics", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \| (counter|gauge|histogram) \|", section, re.M)


def value(samples, name, *labels):
    """The one sample of `name` whose labels contain every one of `labels`."""
    found = [v for (n, l), v in samples.items() if n == name and all(x in l for x in labels)]
    check(len(found) == 1, f"{name} {labels}: {len(found)} samples")
    return found[0]


def main():
    server_bin, cli = sys.argv[1:3]
    work = tempfile.mkdtemp(prefix="deniable_metrics_scrape_")
    db, log = os.path.join(work, "s.db"), os.path.join(work, "s.log")

    # A database holding one metric, made by a first run.
    proc, target, http = start_collector(server_bin, db, log)
    try:
        out = subprocess.run([cli, f"--target={target}", "create-metric", "--name=smoking",
                              "--design=two_coin"], capture_output=True, text=True, timeout=60)
        check(out.returncode == 0, out.stderr)
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    before = time.time()
    proc, target, http = start_collector(server_bin, db, log)
    try:
        samples, types, helps = scrape(http)
        table = documented()
        check(len(table) >= 20, table)
        for name, kind in table:
            check(types.get(name) == kind, f"{name}: documented as {kind}, scraped {types.get(name)}")
        for (name, labels), v in samples.items():
            if name == "deniable_retention_runs_total":
                continue  # not a call: retention runs once at the start
            if name.startswith("deniable_") and (name.endswith("_total") or
                                                  name.endswith("_count")):
                check(v == 0, f"{name}{{{labels}}} is {v} before any call")
        value(samples, "deniable_retention_runs_total", 'outcome="applied"')
        check(value(samples, "deniable_retention_runs_total", 'outcome="failed"') == 0)
        for outcome in ("accepted", "duplicate", "rejected"):
            value(samples, "deniable_reports_total", 'metric="smoking"', f'outcome="{outcome}"')
            value(samples, "deniable_reports_total", 'metric=""', f'outcome="{outcome}"')
        value(samples, "deniable_retention_reports_dropped_total", 'metric="smoking"')
        value(samples, "deniable_imported_reports_total", 'metric="smoking"', 'outcome="accepted"')
        check('metric=""' in helps["deniable_reports_total"], helps["deniable_reports_total"])
        methods = {l for (n, l) in samples if n == "deniable_request_duration_seconds_count"}
        check(len(methods) >= 14 and all('code="OK"' in l for l in methods), methods)
        for service, method in (("ReportService", "SubmitReports"),
                                ("ReportService", "StreamReports"),
                                ("QueryService", "GetPrevalence"),
                                ("AdminService", "GetServerStats")):
            value(samples, "deniable_calls_total", f'method="deniable.v1.{service}/{method}"',
                  'transport="grpc"')
        buckets = [l for (n, l) in samples
                   if n == "deniable_request_duration_seconds_bucket" and LIST in l]
        check('le="0.0005"' in "".join(buckets) and 'le="10"' in "".join(buckets), buckets)

        # The process collector's series: this server's figures.
        start = value(samples, "process_start_time_seconds")
        check(before - 60 <= start <= time.time() + 1, (before, start))
        check(0 < value(samples, "process_open_fds") <= value(samples, "process_max_fds"))
        check(value(samples, "process_resident_memory_bytes") > 1e6)
        check((value(samples, "process_virtual_memory_bytes") >=
                value(samples, "process_resident_memory_bytes")))
        check(value(samples, "process_cpu_seconds_total") >= 0)

        # One call: its method's histogram count and counter are 1, no other call moved.
        out = subprocess.run([cli, f"--target={target}", "list-metrics"], capture_output=True,
                             text=True, timeout=60)
        check(out.returncode == 0, out.stderr)
        after, _, _ = scrape(http)
        check(value(after, "deniable_request_duration_seconds_count", LIST, 'code="OK"',
                     'transport="grpc"') == 1)
        check(value(after, "deniable_request_duration_seconds_bucket", LIST, 'le="+Inf"',
                     'transport="grpc"') == 1)
        check(value(after, "deniable_request_duration_seconds_sum", LIST, 'transport="grpc"') > 0)
        check(value(after, "deniable_calls_total", LIST, 'code="OK"', 'transport="grpc"') == 1)
        check(sum(v for (n, l), v in after.items()
                   if n == "deniable_calls_total" and 'transport="grpc"' in l) == 1)
        # The same call over HTTP/JSON: timed into the histogram with transport="http".
        request = urllib.request.Request(f"{http}/v1/QueryService/ListMetrics", data=b"{}",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as r:
            check(r.status == 200, r.status)
        after, _, _ = scrape(http)
        check(value(after, "deniable_request_duration_seconds_count", LIST, 'code="OK"',
                     'transport="http"') == 1)
        check(value(after, "deniable_calls_total", LIST, 'code="OK"', 'transport="http"') == 1)
        # A refused call: its code's series appear.
        out = subprocess.run([cli, f"--target={target}", "prevalence", "--metric=no_such"],
                             capture_output=True, text=True, timeout=60)
        check(out.returncode == 3, out.stderr)
        after, _, _ = scrape(http)
        check(value(after, "deniable_request_duration_seconds_count",
                     'method="deniable.v1.QueryService/GetPrevalence"', 'code="NOT_FOUND"',
                     'transport="grpc"') == 1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print("metrics scrape: OK")


if __name__ == "__main__":
    main()
