#!/usr/bin/env python3
"""The Python SDK (client/python, installed with pip into a venv by the CTest fixture) against
the real deniable-server:

1. Reporter with a device file: randomized report with a 16-byte id, one report per metric per
   period (also across a restart), ledger, flush.
2. Delivery contract: the collector killed -> flush fails UNAVAILABLE and every report stays
   queued; restarted on the same port -> all delivered, each counted once. Reports the server
   rejects for good (an invalid label) are dropped and counted, never retried forever.
3. Statistics: 1200 devices (seeded, one Reporter each) report a known truth of 30 %: n exact,
   the debiased estimate within 5 standard errors.
4. QueryClient: Prevalence / GroupPrevalence / SeriesPoint dataclasses; to_dataframe with pandas
   where installed (a clear ImportError otherwise).
5. The wire: the same report ids re-sent are counted once; a bad report in a batch is listed by
   index, naming the field, the rest stored.

Usage: python_client_test.py SERVER_BINARY   (run with the venv's python)
"""
import math
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_server  # noqa: E402

import grpc  # noqa: E402

import deniable  # noqa: E402
from deniable.v1 import report_service_pb2  # noqa: E402
from checks import check  # noqa: E402

DEVICES = 1200
TRUE_SHARE = 0.3


def main():
    server_bin = sys.argv[1]
    work = tempfile.mkdtemp(prefix="deniable_pysdk_")
    db, log = os.path.join(work, "server.db"), os.path.join(work, "server.log")
    server, target = start_server(server_bin, db, log)
    try:
        q = deniable.QueryClient(target, insecure=True)
        q.create_metric("py_m", symmetric_epsilon=1.0, description="python sdk")
        q.create_metric("py_contract", two_coin=True)
        try:
            q.create_metric("py_m", symmetric_epsilon=1.0)
            raise AssertionError("a duplicate metric was created")
        except deniable.DeniableError as e:
            check(e.code == grpc.StatusCode.ALREADY_EXISTS, e)

        # 1. One device: id, one report per period, ledger, restart.
        device = os.path.join(work, "device.db")
        r = deniable.Reporter(target, device, insecure=True, background_sending=False,
                              labels={"lang": "python"})
        try:
            r.report("no_such_metric", True)
            raise AssertionError("reported an unknown metric")
        except deniable.DeniableError as e:
            check(e.code == grpc.StatusCode.NOT_FOUND, e)
        rid = r.report("py_contract", True).report_id
        check(isinstance(rid, bytes) and len(rid) == 16, rid)
        # the period's report is queued: a distinct outcome, nothing sent
        check(r.report("py_contract", False).outcome == deniable.ReportOutcome.ALREADY_REPORTED)
        check(r.pending() == 1)
        r.flush(10)
        ledger = r.ledger()["py_contract"]
        check((ledger.reports_accepted, ledger.reports_acknowledged, ledger.randomizations,
                ledger.reports_repeated_in_period) == (1, 1, 1, 1), ledger)
        check(abs(ledger.epsilon_spent - 1.0986122886681098) < 1e-9, ledger)  # ln 3
        r.close()
        check(oct(os.stat(device).st_mode & 0o777) == "0o600")
        r = deniable.Reporter(target, device, insecure=True, background_sending=False)
        # still this period, after a restart
        check(r.report("py_contract", True).outcome == deniable.ReportOutcome.ALREADY_REPORTED)
        check(r.ledger()["py_contract"].reports_repeated_in_period == 2)
        r.close()

        # 2. Outage: nothing lost, nothing counted twice.
        port = target.rsplit(":", 1)[1]
        sim = deniable.Reporter(target, os.path.join(work, "sim.db"), insecure=True,
                                background_sending=False, one_report_per_period=False,
                                max_attempts=2, initial_backoff=0.01, max_backoff=0.05)
        sim.prefetch(["py_contract"])
        server.kill()
        server.wait(timeout=30)
        for i in range(50):
            sim.report("py_contract", i % 2 == 0)  # the design is cached: no network needed
        try:
            sim.flush(1)
            raise AssertionError("flush succeeded with the collector down")
        except deniable.DeniableError as e:
            check(e.code in (grpc.StatusCode.UNAVAILABLE,
                              grpc.StatusCode.DEADLINE_EXCEEDED), e)
        check(sim.pending() == 50 and sim.stats().failed_attempts >= 1, sim.stats())
        server, target = start_server(server_bin, db, log + "2", f"--listen=127.0.0.1:{port}")
        sim.flush(20)  # calls wait for the channel to reconnect (wait_for_ready)
        stats = sim.stats()
        check(stats.queued == 0 and stats.acknowledged == 50 and stats.dropped_rejected == 0)
        sim.close()
        check(q.prevalence("py_contract").n == 51)

        # Rejected for good: dropped and counted, the flush says so.
        messages = []
        bad = deniable.Reporter(target, None, insecure=True, background_sending=False,
                                labels={"Bad Key": "x"},
                                log=lambda level, message: messages.append((level, message)))
        bad.report("py_contract", True)
        try:
            bad.flush(10)
            raise AssertionError("an invalid report was accepted")
        except deniable.DeniableError as e:
            check(e.code == grpc.StatusCode.INVALID_ARGUMENT and "dropped" in e.message, e)
            check("labels" in e.message, e.message)
        stats = bad.stats()
        check(stats.queued == 0 and stats.dropped_rejected == 1, stats)
        check(any(level == "error" and "dropped 1" in m for level, m in messages), messages)
        bad.close()

        # 3. Many devices, known truth.
        channel = grpc.insecure_channel(target)
        yes = 0
        for i in range(DEVICES):
            truth = i < DEVICES * TRUE_SHARE
            yes += truth
            with deniable.Reporter(channel=channel, background_sending=False, seed=1000 + i,
                                   labels={"lang": "python", "half": "a" if i % 2 else "b"},
                                   shutdown_drain_timeout=10) as dev:
                dev.report("py_m", truth)
        channel.close()
        p = q.prevalence("py_m", group_by="half")
        z = (p.estimate - TRUE_SHARE) / p.standard_error
        print(f"python: n={p.n} estimate={p.estimate:.4f} se={p.standard_error:.4f} "
              f"truth={TRUE_SHARE} z={z:.2f} ci=[{p.ci_lower:.4f}, {p.ci_upper:.4f}]")
        check(p.n == DEVICES, p.n)
        check(abs(z) < 5, z)
        check(isinstance(p, deniable.Prevalence) and p.method and p.epsilon > 0.99)
        check(sorted(g.group for g in p.groups) == ["half=a", "half=b"] or \
            sorted(g.group for g in p.groups) == ["a", "b"], p.groups)
        check(sum(g.n for g in p.groups) == DEVICES)

        # 4. Series and frames.
        now = int(time.time())
        points = q.series("py_m", start=now - 3 * 86400, end=now + 86400, bucket="DAY")
        check(sum(pt.n for pt in points) == DEVICES and points[-1].n == DEVICES, points)
        try:
            q.series("py_m", start=now - 86400, end=now, bucket="FORTNIGHT")
            raise AssertionError("an unknown bucket was accepted")
        except deniable.DeniableError as e:
            check(e.code == grpc.StatusCode.INVALID_ARGUMENT and "bucket" in e.message)
        metrics = {m.name: m for m in q.list_metrics()}
        check(abs(metrics["py_m"].epsilon - 1.0) < 1e-9, metrics)
        try:
            import pandas  # noqa: F401
            frame = deniable.to_dataframe(p.groups)
            check(list(frame["n"]) == [g.n for g in p.groups])
            print("pandas: DataFrame of", len(frame), "groups")
        except ImportError:
            try:
                deniable.to_dataframe(p.groups)
                raise AssertionError("to_dataframe without pandas")
            except ImportError as e:
                check("pandas" in str(e))
            print("pandas not installed: dataclasses only (ImportError checked)")

        # 5. The wire contract, with the package's generated messages.
        wire = grpc.insecure_channel(target)
        submit = wire.unary_unary(
            "/deniable.v1.ReportService/SubmitReports",
            request_serializer=report_service_pb2.SubmitReportsRequest.SerializeToString,
            response_deserializer=report_service_pb2.SubmitReportsResponse.FromString)
        hour = now - now % 3600
        reports = [report_service_pb2.Report(metric="py_m", design_version=1, bit=i % 2,
                                             report_id=secrets.token_bytes(16),
                                             event_time_seconds=hour) for i in range(20)]
        check(submit(report_service_pb2.SubmitReportsRequest(reports=reports),
                      timeout=10).accepted == 20)
        again = submit(report_service_pb2.SubmitReportsRequest(reports=reports), timeout=10)
        check(again.accepted == 0 and again.duplicates == 20, again)
        good = report_service_pb2.Report()
        good.CopyFrom(reports[0])
        good.report_id = secrets.token_bytes(16)
        wrong = report_service_pb2.Report()
        wrong.CopyFrom(good)
        wrong.report_id = secrets.token_bytes(16)
        wrong.bit = 2
        out = submit(report_service_pb2.SubmitReportsRequest(reports=[good, wrong]), timeout=10)
        check(out.accepted == 1 and len(out.rejections) == 1, out)
        check(out.rejections[0].index == 1 and out.rejections[0].permanent)
        check(re.search(r"reports\[1\]\.bit", out.rejections[0].reason), out.rejections[0])

        # 6. Missing values are NaN (issue 29): a group below min_reports keeps its n only;
        # series frames are indexed by UTC datetimes.
        q.create_metric("py_small", symmetric_epsilon=1.0, min_reports=5)
        small = [report_service_pb2.Report(
            metric="py_small", design_version=1, bit=i % 2, report_id=secrets.token_bytes(16),
            event_time_seconds=hour, labels={"g": "big" if i < 6 else "small"})
            for i in range(8)]
        check(submit(report_service_pb2.SubmitReportsRequest(reports=small),
                      timeout=10).accepted == 8)
        groups = {g.group: g for g in q.prevalence("py_small", group_by="g").groups}
        check(groups["small"].suppressed and groups["small"].n == 2, groups)
        check(all(math.isnan(x) for x in (groups["small"].estimate, groups["small"].ci_lower,
                                          groups["small"].ci_upper)), groups["small"])
        check(not math.isnan(groups["big"].estimate), groups["big"])
        points = q.series("py_small", start=hour - 86400, end=hour + 3600, bucket="HOUR")
        check([(pt.n, pt.suppressed) for pt in points] == [(8, False)], points)
        try:
            import pandas
            frame = deniable.to_dataframe(points)
            check(frame.index[0] == pandas.Timestamp(hour, unit="s", tz="UTC"), frame.index)
        except ImportError:
            print("pandas not installed: the frame's index is checked by python_sdk_unit")
        wire.close()
        q.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
