#!/usr/bin/env python3
"""The Python SDK's design fingerprint and the QueryClient's difference and plan, against the
real deniable-server (CTest python_design_fingerprint):

1. A device caches metric "fp" (two_coin v1) and delivers a report carrying the collector's
   design_fingerprint. The operator recreates the database: "fp" v1 is now symmetric_epsilon 0.5
   on a collector at the same address. The two reports still queued (memoized bits of the old
   design) are rejected per report with FAILED_PRECONDITION: the SDK drops exactly those, counts
   them in dropped_design_mismatch (not dropped_rejected), never randomizes them again, forgets
   the memoized bits of v1 and fetches the design again; the next report is a new draw with the
   new design and is stored. The new collector never counts a bit of the old design.
2. QueryClient.difference over two windows of known reports equals the difference of the two
   prevalences with se = sqrt(se1^2 + se2^2); QueryClient.plan matches the worst-case formula
   ceil(z^2 / (4 h^2 (a - b)^2)); bad input names the field.

Usage: python_design_fingerprint_test.py SERVER_BINARY   (run with the SDK venv's python)
"""
import glob
import math
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_server  # noqa: E402

import grpc  # noqa: E402

import deniable  # noqa: E402
from deniable.v1 import report_service_pb2  # noqa: E402
from checks import check  # noqa: E402


def design_mismatch(server_bin, work):
    db, log = os.path.join(work, "a.db"), os.path.join(work, "a.log")
    server, target = start_server(server_bin, db, log)
    port = target.rsplit(":", 1)[1]
    q = deniable.QueryClient(target, insecure=True)
    q.create_metric("fp", two_coin=True, min_reports=1)
    messages = []
    device = deniable.Reporter(target, os.path.join(work, "device.db"), insecure=True,
                               background_sending=False, one_report_per_period=False,
                               initial_backoff=0.01, max_backoff=0.05,
                               log=lambda level, m: messages.append((level, m)))
    device.report("fp", True)
    device.flush(10)
    check(q.prevalence("fp").n == 1)
    device.report("fp", True)   # the memoized bit of two_coin v1, queued
    device.report("fp", False)
    check(device.pending() == 2 and device.ledger()["fp"].randomizations == 2)
    q.close()

    # The operator recreates the database: same address, same metric name and version number,
    # another design.
    server.terminate()
    server.wait(timeout=30)
    for f in glob.glob(db + "*"):
        os.remove(f)
    server, target = start_server(server_bin, db, log + "2", f"--listen=127.0.0.1:{port}")
    q = deniable.QueryClient(target, insecure=True)
    q.create_metric("fp", symmetric_epsilon=0.5, min_reports=1)
    try:
        device.flush(20)
        raise AssertionError("reports randomized with another collector's design were accepted")
    except deniable.DeniableError as e:
        check(e.code == grpc.StatusCode.FAILED_PRECONDITION, e)
        check("dropped 2 reports" in e.message and "design_fingerprint" in e.message, e.message)
    stats = device.stats()
    check((stats.dropped_design_mismatch, stats.dropped_rejected, stats.queued) == (2, 0, 0), \
        stats)
    check(device.ledger()["fp"].randomizations == 2, "a dropped report was randomized again")
    check(any(level == "error" and "dropped 2 reports" in m for level, m in messages), messages)

    # The next report draws afresh (the memo of v1 was forgotten) with the new design.
    device.report("fp", True)
    check(device.ledger()["fp"].randomizations == 3)
    check(abs(device.ledger()["fp"].epsilon_spent - (2 * math.log(3) + 0.5)) < 1e-9, \
        device.ledger()["fp"])
    device.flush(10)
    p = q.prevalence("fp")
    check(p.n == 1 and abs(p.epsilon - 0.5) < 1e-12, p)
    check(device.stats().acknowledged == 2)
    device.close()
    q.close()
    return server


def difference_and_plan(target):
    q = deniable.QueryClient(target, insecure=True)
    q.create_metric("diff", symmetric_epsilon=1.0, min_reports=1)
    wire = grpc.insecure_channel(target)
    submit = wire.unary_unary(
        "/deniable.v1.ReportService/SubmitReports",
        request_serializer=report_service_pb2.SubmitReportsRequest.SerializeToString,
        response_deserializer=report_service_pb2.SubmitReportsResponse.FromString)
    now = int(time.time())
    hour = now - now % 3600
    windows = [(hour - 48 * 3600, hour - 47 * 3600, 26), (hour - 24 * 3600, hour - 23 * 3600, 14)]
    for i, (start, _, yes) in enumerate(windows):
        reports = [report_service_pb2.Report(metric="diff", design_version=1,
                                             bit=1 if k < yes else 0,
                                             report_id=bytes([i, k]) + bytes(14),
                                             event_time_seconds=start) for k in range(40)]
        out = submit(report_service_pb2.SubmitReportsRequest(reports=reports), timeout=10)
        check(out.accepted == 40, out)
    wire.close()
    first, second = (w[:2] for w in windows)
    d = q.difference("diff", first, second, level=0.9)
    p1 = q.prevalence("diff", start=first[0], end=first[1], level=0.9)
    p2 = q.prevalence("diff", start=second[0], end=second[1], level=0.9)
    check((d.first.n, d.second.n, d.first.yes_count, d.second.yes_count) == (40, 40, 26, 14), d)
    check(abs(d.difference - (p1.estimate - p2.estimate)) < 1e-12, (d, p1, p2))
    check(abs(d.standard_error - math.hypot(p1.standard_error, p2.standard_error)) < 1e-12)
    check(d.ci_lower < d.difference < d.ci_upper and d.confidence_level == 0.9, d)
    # The change as second minus first (issue 29): 0.8246 then 0.1754 fell by 64.92 points.
    check(abs(d.change - (p2.estimate - p1.estimate)) < 1e-12 and d.change < 0, d)
    check(d.change_text == f"fell by {-100 * d.change:.2f} points" == "fell by 64.92 points",
          d.change_text)
    check(d.change_ci_lower < d.change < d.change_ci_upper == -d.ci_lower, d)
    check(p1.estimand != "" and p1.method_reason != "" and p1.periods >= 1, p1)
    try:
        q.difference("diff", first, (1, 2, 3))
        raise AssertionError("a bad window was accepted")
    except deniable.DeniableError as e:
        check(e.code == grpc.StatusCode.INVALID_ARGUMENT and "second" in e.message, e)
    try:
        q.difference("no_such_metric", first, second)
        raise AssertionError("an unknown metric was accepted")
    except deniable.DeniableError as e:
        check(e.code == grpc.StatusCode.NOT_FOUND, e)

    plan = q.plan(half_width=0.05, symmetric_epsilon=1.0)
    z = 1.959963984540054
    a_minus_b = (math.e - 1) / (math.e + 1)
    expected = math.ceil(z * z / (4 * 0.05 ** 2 * a_minus_b ** 2))
    check(plan.reports_needed_worst_case == expected == plan.reports_needed, (plan, expected))
    check(plan.variance_inflation == 0 and abs(plan.epsilon - 1.0) < 1e-12, plan)
    informed = q.plan(half_width=0.05, symmetric_epsilon=1.0, assumed_prevalence=0.1)
    check(informed.reports_needed < expected and informed.variance_inflation > 1, informed)
    try:
        q.plan(half_width=0, two_coin=True)
        raise AssertionError("half_width 0 was accepted")
    except deniable.DeniableError as e:
        check(e.code == grpc.StatusCode.INVALID_ARGUMENT and "half_width" in e.message, e)
    q.close()


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_pyfp_")
    server = design_mismatch(server_bin, work)
    try:
        port = None
        for line in open(os.path.join(work, "a.log2")):
            if "event=start" in line:
                port = line.split("port=")[1].split()[0]
        difference_and_plan(f"127.0.0.1:{port}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("python design fingerprint, difference and plan: OK")


if __name__ == "__main__":
    main()
