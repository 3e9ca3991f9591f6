#!/usr/bin/env python3
"""The delivery contract's table (tests/conformance/delivery_contract.json) through the C API
(libdeniable_c.so from ctypes, the library the JVM SDK and Swift bind) and its real gRPC
transport: a scripted collector served by grpcio in this process answers each case, and the C
API's flush status, deniable_delivery_stats and the calls made must be the table's.

The C++ engine behind the C API runs every case in DeliveryConformanceTest (with a scripted
transport and a fake clock); here only the cases that end with the queue empty and no transient
failure run (the C API's reporter keeps its default retry policy and the wall clock), which
covers every drop: a whole batch of one rejected INVALID_ARGUMENT, per-report rejections of
every code, the design mismatch, duplicates, stale metrics, the queue bound.

Usage: c_api_conformance_test.py LIBDENIABLE_C (run with the python_sdk venv's python, which
has the SDK's generated protobuf modules and grpcio).
"""
import ctypes
import json
import math
import os
import sys
import tempfile
import threading
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from c_api_test import Error, Options, Stats, load  # noqa: E402 (the ctypes view of deniable_c.h)
from checks import check  # noqa: E402

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance",
                     "delivery_contract.json")
# deniable_delivery_stats has these of the table's counters.
COUNTERS = ("acknowledged", "duplicates", "dropped_rejected", "dropped_queue_full",
            "dropped_too_old", "send_attempts", "failed_attempts", "dropped_design_mismatch",
            "batch_splits", "kept_after_rejection")


class ScriptedCollector:
    """GetDesign serves every metric as a yes/no design (version 1); SubmitReports follows the
    script, then accepts every report. Thread-safe (grpcio calls from its pool)."""

    def __init__(self, pb2):
        self.pb2, self.mu = pb2, threading.Lock()
        self.script, self.calls, self.design_calls = [], [], 0

    def get_design(self, request, context):
        with self.mu:
            self.design_calls += 1
        a, b = math.e / (1 + math.e), 1 / (1 + math.e)
        return self.pb2.GetDesignResponse(
            metric=request.metric, time_precision_seconds=3600,
            design=self.design_pb2.Design(
                version=1, a=a, b=b, epsilon=1.0,
                parameters=self.design_pb2.DesignParameters(
                    symmetric_epsilon=self.design_pb2.SymmetricEpsilon(epsilon=1.0))))

    def submit(self, request, context):
        with self.mu:
            self.calls.append(len(request.reports))
            answer = self.script.pop(0) if self.script else {"status": "OK"}
        if answer["status"] != "OK":
            context.abort(grpc.StatusCode[answer["status"]], "scripted")
        rejections = [self.pb2.ReportRejection(
            index=r["index"], permanent=r["permanent"], reason="scripted",
            code=r["code"] if isinstance(r["code"], int) else grpc.StatusCode[r["code"]].value[0])
            for r in answer.get("rejections", [])]
        return self.pb2.SubmitReportsResponse(
            duplicates=answer.get("duplicates", 0), rejections=rejections,
            stale_metrics=answer.get("stale_metrics", []))


def main():
    lib = load(sys.argv[1])
    from deniable.v1 import design_pb2, report_service_pb2  # the installed Python SDK's
    collector = ScriptedCollector(report_service_pb2)
    collector.design_pb2 = design_pb2
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "deniable.v1.ReportService", {
            "GetDesign": grpc.unary_unary_rpc_method_handler(
                collector.get_design,
                request_deserializer=report_service_pb2.GetDesignRequest.FromString,
                response_serializer=report_service_pb2.GetDesignResponse.SerializeToString),
            "SubmitReports": grpc.unary_unary_rpc_method_handler(
                collector.submit,
                request_deserializer=report_service_pb2.SubmitReportsRequest.FromString,
                response_serializer=report_service_pb2.SubmitReportsResponse.SerializeToString),
        }),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    work = tempfile.mkdtemp(prefix="deniable_c_conformance_")
    ran = 0
    try:
        with open(TABLE, encoding="utf-8") as f:
            cases = json.load(f)["cases"]
        for case in cases:
            expect = case["expect"]
            if expect["next_step"] != "done" or case.get("too_old", 0):
                continue
            ran += 1
            name = case["name"]
            options = Options()
            lib.deniable_reporter_options_init(ctypes.byref(options))
            options.target = f"127.0.0.1:{port}".encode()
            options.insecure = 1
            options.store_path = os.path.join(work, f"{name}.db").encode()
            options.sync_every_report = 0
            options.background_sending = 0
            options.one_report_per_period = 0
            options.shutdown_drain_ms = 0
            options.max_batch_reports = case["reports"]
            options.max_queued_reports = case.get("max_queued_reports", 100000)
            error = Error()
            handle = ctypes.c_void_p()
            check(lib.deniable_reporter_open(ctypes.byref(options), ctypes.byref(handle),
                                             ctypes.byref(error)) == 0, (name, error.message))
            try:
                for i in range(case["reports"]):
                    check(lib.deniable_reporter_report(handle, b"m", int(i % 2 == 0), None, None,
                                                       ctypes.byref(error)) == 0,
                          (name, error.message))
                with collector.mu:
                    collector.script = list(case["answers"])
                    collector.calls = []
                    design_calls = collector.design_calls
                code = lib.deniable_reporter_flush(handle, 20000, ctypes.byref(error))
                flushed = lib.deniable_status_name(code).decode()
                check(flushed == expect["flush"], (name, flushed, error.message))
                stats = Stats()
                check(lib.deniable_reporter_stats(handle, ctypes.byref(stats),
                                                  ctypes.byref(error)) == 0, error.message)
                got = {c: getattr(stats, c) for c in COUNTERS}
                want = {c: expect["counters"].get(c, 0) for c in COUNTERS}
                check(got == want, (name, got, want))
                check(stats.queued == 0, (name, stats.queued))
                with collector.mu:
                    check(collector.calls == expect["batch_sizes"], (name, collector.calls))
                    refetched = collector.design_calls - design_calls
                check(refetched == (1 if expect["design_refetched"] else 0), (name, refetched))
            finally:
                lib.deniable_reporter_close(handle)
        check(ran >= 20, f"only {ran} cases of the table ran")
        print(f"c_api_conformance: {ran} cases of {len(cases)} passed through the C API")
    finally:
        server.stop(0)


if __name__ == "__main__":
    main()
