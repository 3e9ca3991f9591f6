#!/usr/bin/env python3
"""The Python SDK's categorical reports (issue 14) through the real deniable-server.

Three metrics with 5 categories, one per mechanism (K_RR, OUE, OLH), are created with the
QueryClient. 400 devices per metric (one Reporter each, secure randomness, in-memory store)
report their true category by name. A client interceptor on the shared channel keeps every
SubmitReports request as sent, so the test counts, per category, the reports supporting it
with the Python rule (deniable.categorical.supports). Then the collector's C++ estimate must
match exactly: the same n and support counts (the C++ server decoded the Python wire form, OUE
bits and OLH hashes included, to the same supports), each unbiased estimate equal to
(c / n - q*) / (p* - q*) and its standard error to sqrt(lambda (1 - lambda) / n) / (p* - q*)
(to 1e-12), consistent shares non-negative and summing to 1, each simultaneous interval
containing the category's own. The QueryClient returns the shares as dataclasses, also by group
and in a series. A memoized device reports the same category on two days: the same
CategoricalReport twice, one randomization in its ledger.

Usage: python_categorical_test.py SERVER_BINARY   (run with the venv's python)
"""
import math
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_server  # noqa: E402

import grpc  # noqa: E402

import deniable  # noqa: E402
from deniable import categorical  # noqa: E402
from deniable.v1 import report_service_pb2  # noqa: E402
from checks import check  # noqa: E402

NAMES = ["red", "green", "blue", "cyan", "gray"]
TRUTH = [160, 100, 80, 40, 20]  # 400 devices per metric
MECHANISMS = (("K_RR", 1.0), ("OUE", 1.0), ("OLH", 1.5))
HOUR = 3600


class Recorder(grpc.UnaryUnaryClientInterceptor):
    """Keeps every SubmitReportsRequest as sent on the channel."""

    def __init__(self):
        self.reports = []

    def intercept_unary_unary(self, continuation, details, request):
        if details.method.endswith("/SubmitReports"):
            self.reports.extend(request.reports)
        return continuation(details, request)


def check_shares(p, design, counts, n):
    gap = design.p_star - design.q_star
    check(p.n == n, p)
    check([s.category for s in p.shares] == NAMES, p.shares)
    check(p.consistent_method == "norm_sub" and p.simultaneous_method == "sidak", p)
    for s, c in zip(p.shares, counts):
        check(s.support_count == c, (s, c))
        lam = c / n
        check(abs(s.estimate - (lam - design.q_star) / gap) < 1e-12, (s, c))
        check(abs(s.standard_error - math.sqrt(lam * (1 - lam) / n) / gap) < 1e-12, (s, c))
        check(s.simultaneous_lower <= s.ci_lower <= s.ci_upper <= s.simultaneous_upper, s)
        check(s.estimate_consistent >= 0, s)
    check(abs(sum(s.estimate_consistent for s in p.shares) - 1) < 1e-12, p.shares)


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_pycat_")
    server, target = start_server(server_bin, os.path.join(work, "server.db"),
                                  os.path.join(work, "server.log"))
    recorder = Recorder()
    channel = grpc.intercept_channel(grpc.insecure_channel(target), recorder)
    try:
        q = deniable.QueryClient(target, insecure=True)
        for mechanism, eps in MECHANISMS:
            q.create_metric(f"color_{mechanism.lower()}", categories=NAMES, categorical=eps,
                            mechanism=mechanism, description="Favourite colour?")
        metrics = {m.name: m for m in q.list_metrics()}
        for mechanism, _ in MECHANISMS:
            m = metrics[f"color_{mechanism.lower()}"]
            check(m.categories == NAMES and m.mechanism == mechanism, m)

        for mechanism, _ in MECHANISMS:
            metric = f"color_{mechanism.lower()}"
            first = len(recorder.reports)
            truths = [v for v, count in enumerate(TRUTH) for _ in range(count)]
            for device, truth in enumerate(truths):
                r = deniable.Reporter(channel=channel, background_sending=False,
                                      labels={"half": "a" if device % 2 else "b"},
                                      shutdown_drain_timeout=0)
                check(r.report(metric, NAMES[truth]).outcome == deniable.ReportOutcome.QUEUED)
                r.flush(10)
                r.close()
            sent = recorder.reports[first:]
            check(len(sent) == len(truths), len(sent))
            check(all(x.HasField("categorical") and x.bit == 0 for x in sent))

            response = report_service_pb2.GetDesignResponse()
            stub = channel.unary_unary("/deniable.v1.ReportService/GetDesign",
                                       request_serializer=lambda x: x.SerializeToString(),
                                       response_deserializer=response.FromString)
            served = stub(report_service_pb2.GetDesignRequest(metric=metric), timeout=10)
            design = categorical.design_from_wire(served.design, list(served.categories))
            counts = [sum(categorical.supports(design, x.categorical, v) for x in sent)
                      for v in range(len(NAMES))]
            p = q.prevalence(metric)
            check_shares(p, design, counts, len(truths))
            # Groups: each half's shares from its own reports.
            grouped = q.prevalence(metric, group_by="half")
            for g in grouped.groups:
                mine = [x for x in sent if x.labels["half"] == g.group]
                check(g.n == len(mine), (g.group, g.n, len(mine)))
                check([s.support_count for s in g.shares] == [
                    sum(categorical.supports(design, x.categorical, v) for x in mine)
                    for v in range(len(NAMES))], g)
            # A series over the last day holds the same shares in its buckets.
            now = int(time.time())
            points = q.series(metric, start=(now - 86400) // HOUR * HOUR,
                              end=(now // HOUR + 2) * HOUR, bucket="DAY")
            check(sum(pt.n for pt in points) == len(truths), points)
            check(all(len(pt.shares) == len(NAMES) for pt in points if not pt.suppressed))
            print(f"{metric}: n {p.n}, support {counts}, estimates",
                  [round(s.estimate, 3) for s in p.shares], "true",
                  [round(t / len(truths), 3) for t in TRUTH])

        # One memoized device on two days: the same randomized report, one randomization.
        now = [time.time() - 86400]
        r = deniable.Reporter(channel=channel, background_sending=False, clock=lambda: now[0],
                              shutdown_drain_timeout=0)
        first = len(recorder.reports)
        r.report("color_olh", "blue")
        now[0] += 86400
        r.report("color_olh", "blue")
        r.flush(10)
        a, b = recorder.reports[first:]
        check(a.categorical == b.categorical and a.report_id != b.report_id, (a, b))
        ledger = r.ledger()["color_olh"]
        check((ledger.reports_accepted, ledger.randomizations) == (2, 1), ledger)
        check(abs(ledger.epsilon_spent - 1.5) < 1e-12, ledger)
        r.close()
    finally:
        channel.close()
        server.terminate()
        server.wait(timeout=30)
    print("python categorical interop: ok")


if __name__ == "__main__":
    main()
