#!/usr/bin/env python3
"""The proto is the contract: a Python client (Debian's python3-grpcio and python3-protobuf) talks
to the real deniable-server with stubs generated from proto/ at test time.

It creates a metric, fetches its design, randomizes each answer on the "device" with that design
and Python's `secrets` module (a CSPRNG), submits the reports, re-sends them (counted once),
sends an invalid batch (rejected, naming the field) and reads the debiased prevalence back.

Usage: python_client_test.py SERVER_BINARY PROTOC PROTO_DIR
"""
import glob
import os
import secrets
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from test_server import start_server  # noqa: E402

import grpc

N = 4000
TRUE_SHARE = 0.3


def randomize(truth, a, b):
    """1 with probability a for a true "yes", b for a "no" (statistics.md section 1)."""
    p = a if truth else b
    return 1 if secrets.randbelow(1 << 53) < p * (1 << 53) else 0


def main():
    server_bin, protoc, proto_dir = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="deniable_interop_")
    protos = sorted(os.path.relpath(p, proto_dir)
                    for p in glob.glob(os.path.join(proto_dir, "deniable/v1/*.proto")))
    subprocess.run([protoc, f"-I{proto_dir}", f"--python_out={work}"] + protos, check=True)
    sys.path.insert(0, work)
    from deniable.v1 import design_pb2, query_service_pb2, metric_pb2, report_service_pb2  # noqa

    server, target = start_server(server_bin, os.path.join(work, "server.db"),
                                  os.path.join(work, "server.log"))
    try:
        channel = grpc.insecure_channel(target)

        def rpc(service, method, request_type, response_type):
            return channel.unary_unary(f"/deniable.v1.{service}/{method}",
                                       request_serializer=request_type.SerializeToString,
                                       response_deserializer=response_type.FromString)

        create = rpc("QueryService", "CreateMetric", query_service_pb2.CreateMetricRequest,
                     metric_pb2.Metric)
        get_design = rpc("ReportService", "GetDesign", report_service_pb2.GetDesignRequest,
                         report_service_pb2.GetDesignResponse)
        submit = rpc("ReportService", "SubmitReports", report_service_pb2.SubmitReportsRequest,
                     report_service_pb2.SubmitReportsResponse)
        prevalence = rpc("QueryService", "GetPrevalence", query_service_pb2.GetPrevalenceRequest,
                         query_service_pb2.Prevalence)

        params = design_pb2.DesignParameters(
            symmetric_epsilon=design_pb2.SymmetricEpsilon(epsilon=1.0))
        create(query_service_pb2.CreateMetricRequest(name="py_m", design=params), timeout=10)

        design = get_design(report_service_pb2.GetDesignRequest(metric="py_m"), timeout=10)
        a, b = design.design.a, design.design.b
        precision = design.time_precision_seconds or 3600
        assert abs(a - 0.7310585786) < 1e-9 and abs(b - 0.2689414214) < 1e-9, (a, b)
        now = int(time.time())
        event_time = now - now % precision

        truths = [i < N * TRUE_SHARE for i in range(N)]
        reports = [report_service_pb2.Report(metric="py_m", design_version=design.design.version,
                                             bit=randomize(t, a, b),
                                             report_id=secrets.token_bytes(16),
                                             event_time_seconds=event_time,
                                             labels={"lang": "python"})
                   for t in truths]
        accepted = 0
        for i in range(0, N, 1000):
            r = submit(report_service_pb2.SubmitReportsRequest(reports=reports[i:i + 1000]),
                       timeout=10)
            accepted += r.accepted
        assert accepted == N, accepted
        again = submit(report_service_pb2.SubmitReportsRequest(reports=reports[:1000]), timeout=10)
        assert again.accepted == 0 and again.duplicates == 1000, again

        bad = report_service_pb2.Report()
        bad.CopyFrom(reports[0])
        bad.bit = 2
        bad.report_id = secrets.token_bytes(16)
        # A batch is judged report by report: the bad report is listed, the good one stored.
        good = report_service_pb2.Report()
        good.CopyFrom(reports[0])
        good.report_id = secrets.token_bytes(16)
        r = submit(report_service_pb2.SubmitReportsRequest(reports=[good, bad]), timeout=10)
        assert r.accepted == 1, r
        assert len(r.rejections) == 1, r
        rej = r.rejections[0]
        assert rej.index == 1 and rej.permanent, rej
        assert rej.code == grpc.StatusCode.INVALID_ARGUMENT.value[0], rej
        assert "reports[1].bit" in rej.reason, rej.reason
        # A batch malformed as a whole is still refused whole.
        try:
            submit(report_service_pb2.SubmitReportsRequest(), timeout=10)
            raise AssertionError("an empty batch was accepted")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e.code()
            assert "reports" in e.details(), e.details()

        p = prevalence(query_service_pb2.GetPrevalenceRequest(metric="py_m"), timeout=10)
        z = (p.estimate_unbiased - TRUE_SHARE) / p.standard_error
        print(f"n={p.n} estimate={p.estimate_unbiased:.4f} se={p.standard_error:.4f} "
              f"truth={TRUE_SHARE} z={z:.2f} ci=[{p.ci_lower:.4f}, {p.ci_upper:.4f}]")
        assert p.n == N + 1, p.n
        assert abs(z) < 5, z  # fails with probability < 1e-6
        channel.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
