#!/usr/bin/env python3
"""The Python QueryClient's anytime intervals against the real deniable-server (issue 41):
prevalence(interval="ANYTIME") over one day's window answers interval_kind "ANYTIME" with an
interval wider than the fixed-n one on the same reports, equal to the one `deniable prevalence
--interval_kind=anytime --json` prints; series(interval="ANYTIME") gives the day's bucket the
same interval; a range of several reporting periods is refused naming "interval".

Usage: python_anytime_test.py SERVER_BINARY CLI_BINARY   (run with the venv's python)
"""
import json
import os
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

DAY = 86400


def main():
    server_bin, cli_bin = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="deniable_py_anytime_")
    server, target = start_server(server_bin, os.path.join(work, "server.db"),
                                  os.path.join(work, "server.log"))
    try:
        q = deniable.QueryClient(target, insecure=True)
        q.create_metric("py_any", two_coin=True)  # a daily reporting period
        hour = int(time.time()) // 3600 * 3600
        today = hour // DAY * DAY
        # 1000 two-coin reports this hour, 500 "yes" bits: estimate (0.5 - 0.25) / 0.5 = 0.5.
        reports = [report_service_pb2.Report(metric="py_any", design_version=1, bit=int(i < 500),
                                             report_id=i.to_bytes(16, "big"),
                                             event_time_seconds=hour) for i in range(1000)]
        submit = grpc.insecure_channel(target).unary_unary(
            "/deniable.v1.ReportService/SubmitReports",
            request_serializer=report_service_pb2.SubmitReportsRequest.SerializeToString,
            response_deserializer=report_service_pb2.SubmitReportsResponse.FromString)
        # And 100 yesterday: a range over both days spans two reporting periods.
        reports += [report_service_pb2.Report(metric="py_any", design_version=1, bit=i % 2,
                                              report_id=(5000 + i).to_bytes(16, "big"),
                                              event_time_seconds=today - DAY + 3600)
                    for i in range(100)]
        answer = submit(report_service_pb2.SubmitReportsRequest(reports=reports), timeout=10)
        check(answer.accepted == 1100, answer)

        window = dict(start=today, end=today + DAY)
        fixed = q.prevalence("py_any", **window)
        anytime = q.prevalence("py_any", interval="ANYTIME", **window)
        check((fixed.interval_kind, fixed.anytime_tuned_reports) == ("FIXED_N", 0), fixed)
        check((anytime.interval_kind, anytime.anytime_tuned_reports) == ("ANYTIME", 10000),
              anytime)
        check(anytime.n == fixed.n == 1000 and anytime.estimate == fixed.estimate == 0.5, anytime)
        # Wider on both sides (nothing is clipped at 0.5 with 1000 reports).
        check(anytime.ci_lower < fixed.ci_lower and anytime.ci_upper > fixed.ci_upper,
              (fixed.ci_lower, fixed.ci_upper, anytime.ci_lower, anytime.ci_upper))
        tuned = q.prevalence("py_any", interval="anytime", anytime_tuned_reports=1000, **window)
        check(tuned.anytime_tuned_reports == 1000, tuned)

        # The CLI's answer on the same selection: the same interval, to the last bit.
        out = subprocess.run([cli_bin, f"--target={target}", "prevalence", "--metric=py_any",
                              f"--start={today}", f"--end={today + DAY}",
                              "--interval_kind=anytime", "--json"],
                             check=True, capture_output=True, text=True, timeout=30)
        cli = json.loads(out.stdout)
        check(cli["intervalKind"] == "ANYTIME", cli.get("intervalKind"))
        check((cli["ciLower"], cli["ciUpper"]) == (anytime.ci_lower, anytime.ci_upper),
              (cli["ciLower"], cli["ciUpper"], anytime.ci_lower, anytime.ci_upper))

        points = q.series("py_any", bucket="DAY", interval="ANYTIME", **window)
        check(len(points) == 1 and points[0].interval_kind == "ANYTIME", points)
        check((points[0].ci_lower, points[0].ci_upper) == (anytime.ci_lower, anytime.ci_upper),
              points[0])

        try:
            q.prevalence("py_any", interval="ANYTIME", start=today - DAY, end=today + DAY)
            raise AssertionError("an anytime interval over two reporting periods was served")
        except deniable.DeniableError as e:
            check(e.code == grpc.StatusCode.FAILED_PRECONDITION and "interval" in e.message, e)
        print("python anytime:", json.dumps({
            "fixed": [fixed.ci_lower, fixed.ci_upper],
            "anytime": [anytime.ci_lower, anytime.ci_upper],
            "width_ratio": (anytime.ci_upper - anytime.ci_lower)
            / (fixed.ci_upper - fixed.ci_lower)}))
    finally:
        server.kill()
        server.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
