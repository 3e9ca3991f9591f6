#!/usr/bin/env python3
"""Numeric metrics (issue 28) from the Python SDK (gRPC) and the JS SDK in Node and in headless
Chromium (HTTP/JSON, IndexedDB, a page on another origin; skipped without chromium)
through the real deniable-server.

Two metrics are created with the Python QueryClient: "age" (ONE_BIT_MEAN on [0, 100], a grid of
4 cells, epsilon ln 3) and "minutes" (D_BIT_FLIP on [0, 600], 6 buckets, d = 2, epsilon ln 3).
300 Python devices (one Reporter each, `secrets`, in-memory store) and 200 Node devices
(tests/interop/js_numeric_devices.mjs, crypto.getRandomValues) report known values with
report_value / reportValue, a few of them outside the range. A client interceptor keeps the
Python reports as sent; the Node script prints what its reports add to the counters. The
collector must count exactly what the SDKs sent: n, the bits 1 of ONE_BIT_MEAN (its mean equal
to lo + m (ybar (e^eps + 1) - 1) / (e^eps - 1) to 1e-9 and within 5 standard errors of the true
mean of the clipped values), per bucket of D_BIT_FLIP the reports that sampled it and their
bits 1 (each estimate equal to its debiasing to 1e-9), per SDK as a label group too. The
QueryClient gives NumericEstimate dataclasses with quantiles. Then one memoized Python device
reports on three days (30, 30, 90): the same bit for the same value, two randomizations.

Usage: sdk_numeric_test.py SERVER_BINARY   (run with the Python SDK venv's python)
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from components import required  # noqa: E402
from interop_lib import (NODE, REPO, browser, have_chromium, run_page,  # noqa: E402
                         serve_directory, start_collector, stop)
from checks import check  # noqa: E402

import grpc  # noqa: E402

import deniable  # noqa: E402

EPS = math.log(3)
PY_DEVICES, NODE_DEVICES, BROWSER_DEVICES = 300, 200, 20


class Recorder(grpc.UnaryUnaryClientInterceptor):
    """Keeps every SubmitReportsRequest as sent on the channel."""

    def __init__(self):
        self.reports = []

    def intercept_unary_unary(self, continuation, details, request):
        if details.method.endswith("/SubmitReports"):
            self.reports.extend(request.reports)
        return continuation(details, request)


def values(count, lo, hi, salt):
    """Known values spread over [lo, hi], every 25th one outside the range."""
    out = []
    for i in range(count):
        x = lo + (hi - lo) * ((i * 37 + salt) % 101) / 100.0
        if i % 25 == 0:
            x = hi + 50 if i % 50 == 0 else lo - 7
        out.append(x)
    return out


def python_devices(channel, metric, xs):
    clipped = 0
    for x in xs:
        r = deniable.Reporter(channel=channel, background_sending=False,
                              labels={"lang": "python"}, shutdown_drain_timeout=0)
        check(r.report_value(metric, x).outcome == deniable.ReportOutcome.QUEUED)
        r.flush(10)
        clipped += r.stats().values_clipped
        r.close()
    return clipped


def node_devices(base, metric, xs):
    out = subprocess.run([NODE, os.path.join(REPO, "tests", "interop", "js_numeric_devices.mjs"),
                          base, metric, ",".join(repr(x) for x in xs)],
                         check=True, capture_output=True, text=True, timeout=180)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_numeric_")
    pages, origin = serve_directory(os.path.join(REPO, "client", "js"))
    server, target, base = start_collector(server_bin, work, f"--http_cors_origins={origin}")
    recorder = Recorder()
    channel = grpc.intercept_channel(grpc.insecure_channel(target), recorder)
    try:
        q = deniable.QueryClient(target, insecure=True)
        q.create_metric("age", numeric=EPS, mechanism="ONE_BIT_MEAN", value_range=(0, 100),
                        buckets=4, unit="years", min_reports=1)
        q.create_metric("minutes", numeric=EPS, mechanism="D_BIT_FLIP", value_range=(0, 600),
                        buckets=6, sampled_buckets=2, unit="minutes", min_reports=1)
        metrics = {m.name: m for m in q.list_metrics()}
        check(metrics["age"].value_range == (0, 100) and metrics["age"].unit == "years",
              metrics["age"])
        check(metrics["minutes"].mechanism == "D_BIT_FLIP", metrics["minutes"])

        # 1BitMean: every report's bit, counted exactly, and the mean near the truth.
        py_x, node_x = values(PY_DEVICES, 0, 100, 3), values(NODE_DEVICES, 0, 100, 11)
        first = len(recorder.reports)
        py_clipped = python_devices(channel, "age", py_x)
        sent = recorder.reports[first:]
        check(len(sent) == PY_DEVICES and not any(x.HasField("numeric") for x in sent))
        check(py_clipped == sum(1 for x in py_x if not 0 <= x <= 100), py_clipped)
        node = node_devices(base, "age", node_x)
        check(node["devices"] == NODE_DEVICES and node["mechanism"] == "ONE_BIT_MEAN", node)
        check(node["clipped"] == sum(1 for x in node_x if not 0 <= x <= 100), node)
        n = PY_DEVICES + NODE_DEVICES
        ones = sum(x.bit for x in sent) + node["ones"]
        p = q.prevalence("age")
        m = p.numeric
        check(p.n == n and p.yes_count == ones and m.devices == n, (p.n, p.yes_count, m))
        e = math.exp(EPS)
        want = 100.0 * ((ones / n) * (e + 1) - 1) / (e - 1)
        check(abs(m.mean - want) < 1e-9, (m.mean, want))
        truth = sum(min(max(x, 0.0), 100.0) for x in py_x + node_x) / n
        check(abs(m.mean - truth) < 5 * m.mean_standard_error, (m, truth))
        check(m.mean_ci_lower <= m.mean <= m.mean_ci_upper, m)
        check(abs(m.total - m.mean * n) < 1e-6 * max(1.0, abs(m.total)), m)
        check(m.unit == "years" and m.buckets == [] and m.mechanism == "one_bit_mean", m)
        grouped = q.prevalence("age", group_by="lang")
        by_lang = {g.group: g for g in grouped.groups}
        check(by_lang["python"].n == PY_DEVICES and by_lang["node"].n == NODE_DEVICES, by_lang)
        print(f"age: n {n}, ones {ones}, mean {m.mean:.2f} [{m.mean_ci_lower:.2f}, "
              f"{m.mean_ci_upper:.2f}] (se {m.mean_standard_error:.2f}), true {truth:.2f}")

        # dBitFlip: per bucket, the reports that sampled it and their bits 1, exactly.
        py_x, node_x = values(PY_DEVICES, 0, 600, 5), values(NODE_DEVICES, 0, 600, 17)
        first = len(recorder.reports)
        python_devices(channel, "minutes", py_x)
        sent = recorder.reports[first:]
        check(all(x.bit == 0 and len(x.numeric.buckets) == 2 for x in sent))
        node = node_devices(base, "minutes", node_x)
        check(node["devices"] == NODE_DEVICES and node["mechanism"] == "D_BIT_FLIP", node)
        sampled, bucket_ones = list(node["sampled"]), list(node["bucketOnes"])
        for x in sent:
            for j, bit in zip(x.numeric.buckets, x.numeric.bits):
                sampled[j] += 1
                bucket_ones[j] += int(bit)
        p = q.prevalence("minutes", quantiles=[0.5, 0.9])
        m = p.numeric
        check(p.n == n and m.devices == n and len(m.buckets) == 6, (p.n, m))
        check(math.isnan(m.mean) and math.isnan(p.estimate), (m.mean, p.estimate))
        a = math.exp(EPS / 2)
        for j, b in enumerate(m.buckets):
            check((b.lower, b.upper) == (100.0 * j, 100.0 * (j + 1)), b)
            check((b.sampled, b.ones) == (sampled[j], bucket_ones[j]), (j, b, sampled, bucket_ones))
            want = (b.ones / b.sampled - 1 / (a + 1)) / ((a - 1) / (a + 1))
            check(abs(b.estimate - want) < 1e-9, (b, want))
            check(b.simultaneous_lower <= b.ci_lower <= b.ci_upper <= b.simultaneous_upper, b)
        check(abs(sum(b.estimate_consistent for b in m.buckets) - 1) < 1e-9, m.buckets)
        check([x.level for x in m.quantiles] == [0.5, 0.9], m.quantiles)
        check(all(x.ci_lower <= x.value <= x.ci_upper for x in m.quantiles), m.quantiles)
        print(f"minutes: n {n}, sampled {sampled}, ones {bucket_ones}, consistent",
              [round(b.estimate_consistent, 3) for b in m.buckets], "median",
              round(m.quantiles[0].value, 1))

        # One memoized device on two days: the same level (its alpha kept), the same bit, one
        # randomization; a value in another grid cell is a second level and a second epsilon.
        now = [time.time() - 2 * 86400]
        r = deniable.Reporter(channel=channel, background_sending=False, clock=lambda: now[0],
                              shutdown_drain_timeout=0)
        first = len(recorder.reports)
        for value in (30.0, 30.0, 90.0):  # 30: level 1 or 2 by alpha; 90: 3 or 4
            check(r.report_value("age", value).outcome == deniable.ReportOutcome.QUEUED)
            now[0] += 86400
        r.flush(10)
        a, b, _ = recorder.reports[first:]
        check(a.bit == b.bit and a.report_id != b.report_id, (a, b))
        ledger = r.ledger()["age"]
        check((ledger.reports_accepted, ledger.randomizations) == (3, 2), ledger)
        check(abs(ledger.epsilon_spent - 2 * EPS) < 1e-12, ledger)
        r.close()
        check(q.prevalence("age").n == n + 3, "the memoized device's reports are counted")

        # Headless Chromium: devices with IndexedDB stores, from a page on another origin.
        if not have_chromium():
            if required():
                raise RuntimeError("chromium or chromedriver is absent, and "
                                   "DENIABLE_REQUIRE_COMPONENTS is set: the browser part must run")
            print("chromium or chromedriver is absent: the browser part is skipped")
        else:
            browser_devices(q, work, origin, base)
    finally:
        pages.shutdown()
        channel.close()
        stop(server)
        subprocess.run(["rm", "-rf", work])
    print("sdk numeric interop: ok")


def browser_devices(q, work, origin, base):
    """BROWSER_DEVICES Chromium devices per metric: the server adds exactly what they sent."""
    driver = browser(work)
    try:
        for metric, mechanism in (("age", "ONE_BIT_MEAN"), ("minutes", "D_BIT_FLIP")):
            before = q.prevalence(metric, group_by="lang")
            result = run_page(driver, f"{origin}/e2e_page/index.html?collector={base}"
                                      f"&metric={metric}&devices={BROWSER_DEVICES}"
                                      "&phase=numeric")
            check(result["acknowledged"] == BROWSER_DEVICES, result)
            check(result["mechanism"] == mechanism, result)
            after = q.prevalence(metric, group_by="lang")
            check(after.n == before.n + BROWSER_DEVICES, (before.n, after.n))
            group = {g.group: g for g in after.groups}["browser"]
            check(group.n == BROWSER_DEVICES, group)
            if mechanism == "ONE_BIT_MEAN":
                check(after.yes_count == before.yes_count + result["ones"], (after, result))
            else:
                check([(b.sampled, b.ones) for b in group.numeric.buckets]
                      == list(zip(result["sampled"], result["bucketOnes"])), (group, result))
            print(f"browser {metric}: {result}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
