#!/usr/bin/env python3
"""The Python SDK's heavy-hitters reports (issue 40) through the real deniable-server.

A heavy-hitters metric (max_length 2, 8 x 64 sketch, epsilon 3, holdout 0.5) is created with
the QueryClient. 3000 devices (one Reporter each, seeded so the run is repeatable; in-memory
store) report_string one of "a" (50 %), "b" (30 %), "cd" (20 %). A client interceptor keeps
every SubmitReports request as sent. The collector must count what the SDK sent: top_values'
devices equal to the reports, its estimation_reports to the reports of group 0; it must find
"a", "b" and "cd" with no candidates given, and nothing else ("a" above the threshold);
frequencies gives each true share within 5 standard errors (the error includes the
hash-collision allowance) and "zz", which no device holds, within 5 standard errors of 0. One
memoized device reports on two days: the same report twice. The server runs with a fixed hash
salt (--testing_heavy_hitters_salt) and the devices are seeded, so every run is the same run
(with a salt drawn at random, collisions differ from run to run: a spurious or missed value is
the salt's luck, not a fault; DENIABLE_TEST_SALT=N tries another salt by hand).

Usage: python_heavy_hitters_test.py SERVER_BINARY   (run with the Python SDK venv's python)
"""
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_server  # noqa: E402
from checks import check  # noqa: E402

import grpc  # noqa: E402

import deniable  # noqa: E402

DEVICES = 3000
TRUTH = {b"a": 0.5, b"b": 0.3, b"cd": 0.2}
T0 = 1795435200  # 2026-11-23 12:00 UTC
SALT = 41  # any fixed salt repeats; this one finds all three values


class Recorder(grpc.UnaryUnaryClientInterceptor):
    """Keeps every SubmitReportsRequest as sent on the channel."""

    def __init__(self):
        self.reports = []

    def intercept_unary_unary(self, continuation, details, request):
        if details.method.endswith("/SubmitReports"):
            self.reports.extend(request.reports)
        return continuation(details, request)


def value_of(i):
    x = (i * 7919) % 100
    return "a" if x < 50 else "b" if x < 80 else "cd"


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_py_hh_")
    salt = int(os.environ.get("DENIABLE_TEST_SALT") or SALT)
    server, target = start_server(server_bin, os.path.join(work, "server.db"),
                                  os.path.join(work, "server.log"),
                                  f"--testing_heavy_hitters_salt={salt}")
    try:
        q = deniable.QueryClient(target, insecure=True)
        q.create_metric("app", heavy_hitters=3.0, max_length=2, rows=8, width=64,
                        holdout_share=0.5)
        (m,) = [m for m in q.list_metrics() if m.name == "app"]
        check(m.mechanism == "HEAVY_HITTERS", m)
        recorder = Recorder()
        channel = grpc.intercept_channel(grpc.insecure_channel(target), recorder)
        for i in range(DEVICES):
            r = deniable.Reporter(channel=channel, background_sending=False, seed=i,
                                  shutdown_drain_timeout=0, clock=lambda: T0)
            check(r.report_string("app", value_of(i)), i)
            r.flush(10)
            r.close()
        sent = recorder.reports
        check(len(sent) == DEVICES, len(sent))
        check(all(x.HasField("heavy_hitters") for x in sent))
        groups = [x.heavy_hitters.group for x in sent]
        check(set(groups) <= {0, 1, 2, 3}, set(groups))
        top = q.top_values("app", level=0.95)
        check(top.devices == DEVICES, top)
        check(top.estimation_reports == groups.count(0), (top.estimation_reports,
                                                          groups.count(0)))
        found = {v.value for v in top.values}
        want = {b"a", b"b", b"cd"}
        check(found == want if salt == SALT else {b"a", b"b"} <= found, top.values)
        check(any(v.value == b"a" and v.above_threshold for v in top.values), top.values)
        f = q.frequencies("app", [b"a", "b", "cd", "zz"], estimation_group_only=True)
        check([v.value for v in f.values] == [b"a", b"b", b"cd", b"zz"], f.values)
        for v in f.values:
            truth = TRUTH.get(v.value, 0.0)
            check(abs(v.share - truth) < 5 * v.standard_error, (v, truth))
            check(v.reports == groups.count(0), v)
        print(f"python_heavy_hitters: {DEVICES} devices, {groups.count(0)} in the estimation "
              f"group; found {sorted(found)}; shares "
              + ", ".join(f"{v.value!r} {v.share:.3f} +- {v.standard_error:.3f}"
                          for v in f.values))

        # One memoized device on two days: the same report, one randomization.
        recorder.reports.clear()
        clock = [T0]
        r = deniable.Reporter(channel=channel, background_sending=False,
                              shutdown_drain_timeout=0, clock=lambda: clock[0])
        r.report_string("app", "cd")
        clock[0] += 86400
        r.report_string("app", b"cd")
        r.flush(10)
        check(r.ledger()["app"].randomizations == 1, r.ledger())
        r.close()
        first, second = recorder.reports
        check((first.heavy_hitters, first.bit) == (second.heavy_hitters, second.bit),
              recorder.reports)
        check(math.isfinite(top.detection_threshold), top)
        print("python_heavy_hitters: OK")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
