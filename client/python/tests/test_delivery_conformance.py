"""The delivery contract's shared table, tests/conformance/delivery_contract.json, run through the
Python Reporter: for each case a scripted collector (a fake channel) answers the SubmitReports
calls, one flush() is checked against the outcome the table expects, then the collector recovers
and a second flush() must deliver exactly the reports still queued. The C++ SDK
(client/src/delivery_conformance_test.cc) and the JS SDK (client/js/test/
delivery_conformance.test.js) run the same file. One test per case, named after it."""
import json
import math
import os
import unittest

import grpc

import deniable
from deniable.v1 import design_pb2, report_service_pb2
from test_reporter import _RpcError  # a failed call as grpc raises it

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
                     "conformance", "delivery_contract.json")
NOW = 1795435200  # 2026-11-23 12:00 UTC
MAX_REPORT_AGE = 86400
COUNTERS = ("acknowledged", "duplicates", "dropped_rejected", "dropped_design_mismatch",
            "dropped_too_old", "dropped_queue_full", "send_attempts", "failed_attempts",
            "batch_splits", "kept_after_rejection")


def code_number(code):
    """A code by its canonical name, or a number (a malformed answer)."""
    return code if isinstance(code, int) else grpc.StatusCode[code].value[0]


class ScriptedCollector:
    """A channel: GetDesign serves metric "m" (version 1); SubmitReports follows the case's
    answers, then is unreachable (UNAVAILABLE) until recovered, then accepts every report."""

    def __init__(self):
        self.script, self.calls, self.design_calls, self.recovered = [], [], 0, False

    def unary_unary(self, path, request_serializer, response_deserializer):
        return self._design if path.endswith("GetDesign") else self._submit

    def close(self):
        pass

    def _design(self, request, timeout=None, wait_for_ready=None):
        self.design_calls += 1
        a, b = math.e / (1 + math.e), 1 / (1 + math.e)
        return report_service_pb2.GetDesignResponse(
            metric=request.metric, time_precision_seconds=3600,
            design=design_pb2.Design(version=1, a=a, b=b, epsilon=1.0))

    def _submit(self, request, timeout=None, wait_for_ready=None):
        self.calls.append([r.report_id for r in request.reports])
        if self.script:
            answer = self.script.pop(0)
            code = grpc.StatusCode[answer["status"]]
            if code != grpc.StatusCode.OK:
                raise _RpcError(code, answer.get("transport_error", "scripted"))
            rejections = [report_service_pb2.ReportRejection(
                index=r["index"], code=code_number(r["code"]), permanent=r["permanent"],
                reason=f"reports[{r['index']}]: scripted") for r in answer.get("rejections", [])]
            return report_service_pb2.SubmitReportsResponse(
                duplicates=answer.get("duplicates", 0), rejections=rejections,
                stale_metrics=answer.get("stale_metrics", []))
        if not self.recovered:
            raise _RpcError(grpc.StatusCode.UNAVAILABLE, "unreachable (the script ended)")
        return report_service_pb2.SubmitReportsResponse(accepted=len(request.reports))


def run_case(test, case):
    expect = case["expect"]
    reports, too_old = case["reports"], case.get("too_old", 0)
    collector = ScriptedCollector()
    now = [NOW - 2 * MAX_REPORT_AGE]
    errors = []
    r = deniable.Reporter(
        channel=collector, background_sending=False, one_report_per_period=False,
        max_batch_reports=reports, max_report_age=MAX_REPORT_AGE, max_attempts=1,
        max_queued_reports=case.get("max_queued_reports", 100000),
        initial_backoff=0.001, max_backoff=0.002, shutdown_drain_timeout=0,
        clock=lambda: now[0], log=lambda level, message: errors.append(message)
        if level == "error" else None)
    try:
        ids = []
        for i in range(reports):
            if i == too_old:
                now[0] = NOW
            ids.append(r.report("m", i % 2 == 0).report_id)
        now[0] = NOW
        design_calls = collector.design_calls

        collector.script = list(case["answers"])
        try:
            r.flush(30)
            flushed = "OK"
        except deniable.DeniableError as e:
            flushed = e.code.name
        test.assertEqual(flushed, expect["flush"])
        sizes = [len(call) for call in collector.calls]
        test.assertEqual(sizes, expect["batch_sizes"])
        queued = expect["queued"]
        test.assertEqual(r.pending(), len(queued))
        stats = r.stats()
        want = {name: expect["counters"].get(name, 0) for name in COUNTERS}
        test.assertFalse(set(expect["counters"]) - set(COUNTERS), "no such counter")
        test.assertEqual({name: getattr(stats, name) for name in COUNTERS}, want)
        test.assertEqual(len(errors), expect["errors_logged"], errors)

        # next_step, as the calls show it.
        answers, step = len(case["answers"]), expect["next_step"]
        if step == "retry_with_backoff":
            test.assertEqual(len(sizes), answers, "the flush went on after a transient failure")
            test.assertTrue(queued)
        elif step == "halve_and_resend":
            test.assertEqual(len(sizes), answers + 1)
            test.assertEqual(sizes[answers], sizes[answers - 1] // 2)
        elif step == "send_next_batch":
            test.assertEqual(len(sizes), answers + 1)
        else:
            test.assertEqual(step, "done")
            test.assertEqual(len(sizes), answers)
            test.assertEqual(queued, [])

        # Recovery: exactly the reports still queued are sent, oldest first, with their ids.
        collector.recovered = True
        before = len(collector.calls)
        r.flush(30)
        resent = [i for call in collector.calls[before:] for i in call]
        test.assertEqual(resent, [ids[i] for i in queued])
        test.assertEqual(r.pending(), 0)
        stats = r.stats()
        test.assertEqual(stats.acknowledged, want["acknowledged"] + len(queued))
        test.assertEqual(stats.dropped_rejected, want["dropped_rejected"])
        test.assertEqual(stats.dropped_design_mismatch, want["dropped_design_mismatch"])
        test.assertEqual(collector.design_calls - design_calls,
                         1 if expect["design_refetched"] else 0)
    finally:
        r.close()


class DeliveryConformanceTest(unittest.TestCase):
    """test_<case name>: one per row of the table."""


def _add_cases():
    with open(TABLE, encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    for case in cases:
        setattr(DeliveryConformanceTest, f"test_{case['name']}",
                lambda self, c=case: run_case(self, c))


_add_cases()

if __name__ == "__main__":
    unittest.main()
