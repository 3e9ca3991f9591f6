"""The per-report options (labels, category by name or by index, a numeric value) against the
shared table tests/conformance/report_options.json, which every SDK runs (docs/sdk.md
"Per-report options"): each case on a fresh seeded reporter over a fake collector serving the
table's metrics; its error (code and words of the message), or the one report sent (kind of
answer, labels, and for a category by index the very report the call by name makes with the
same seed). Run with the installed package (CTest python_sdk_unit)."""
import json
import math
import os
import unittest

import grpc

import deniable
from deniable import categorical
from deniable.v1 import design_pb2, report_service_pb2

from test_numeric import numeric_response

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
                     "conformance", "report_options.json")
T0 = 1795435200  # 2026-11-23 12:00 UTC


def served(name, metric):
    d = metric["design"]
    if metric["kind"] == "yes_no":
        return report_service_pb2.GetDesignResponse(
            metric=name, time_precision_seconds=3600, reporting_period_seconds=86400,
            design=design_pb2.Design(version=1, a=d["a"], b=d["b"], epsilon=d["epsilon"]))
    if metric["kind"] == "categorical":
        mechanism = design_pb2.CategoricalMechanism.Value(d["mechanism"])
        k = len(metric["categories"])
        p, q, g = categorical.support_channel(mechanism, k, d["epsilon"])
        return report_service_pb2.GetDesignResponse(
            metric=name, time_precision_seconds=3600, reporting_period_seconds=86400,
            categories=metric["categories"], design=design_pb2.Design(
                parameters=design_pb2.DesignParameters(categorical=design_pb2.Categorical(
                    mechanism=mechanism, epsilon=d["epsilon"])),
                version=1, a=p, b=q, epsilon=d["epsilon"], categories=k, hash_buckets=g))
    return numeric_response(name, design_pb2.NumericMechanism.Value(d["mechanism"]), d["edges"],
                            d.get("sampled_buckets", 0), epsilon=d["epsilon"])


class TableCollector:
    """GetDesign serves the table's metrics; SubmitReports keeps what it receives."""

    def __init__(self, metrics):
        self.designs = {name: served(name, m) for name, m in metrics.items()}
        self.received = []

    def unary_unary(self, path, request_serializer, response_deserializer):
        return self._design if path.endswith("GetDesign") else self._submit

    def close(self):
        pass

    def _design(self, request, timeout=None, wait_for_ready=None):
        return self.designs[request.metric]

    def _submit(self, request, timeout=None, wait_for_ready=None):
        self.received.extend(request.reports)
        return report_service_pb2.SubmitReportsResponse(accepted=len(request.reports))


def run(table, metric, call, seed=11):
    """(DeniableError or None, reports sent) of one call on a fresh reporter."""
    collector = TableCollector(table["metrics"])
    reporter = deniable.Reporter(channel=collector, background_sending=False, clock=lambda: T0,
                                 shutdown_drain_timeout=0, seed=seed,
                                 labels=table["reporter_labels"])
    kw = {"labels": call["labels"]} if "labels" in call else {}
    error = None
    try:
        if "bool" in call:
            reporter.report(metric, call["bool"], **kw)
        elif "category" in call:
            reporter.report(metric, call["category"], **kw)
        elif "category_index" in call:
            reporter.report_category_index(metric, call["category_index"], **kw)
        else:
            value = math.nan if call["value"] == "NaN" else call["value"]
            reporter.report_value(metric, value, **kw)
    except deniable.DeniableError as e:
        error = e
    reporter.flush(timeout=10)
    reporter.close()
    return error, list(collector.received)


def wire_kind(report):
    if report.HasField("categorical"):
        return "categorical"
    return "numeric" if report.HasField("numeric") else "bit"


class ReportOptionsConformanceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(TABLE) as f:
            cls.table = json.load(f)

    def test_every_case_of_the_shared_table(self):
        self.assertGreaterEqual(len(self.table["cases"]), 20)
        for case in self.table["cases"]:
            with self.subTest(case["name"]):
                expect = case["expect"]
                error, sent = run(self.table, case["metric"], case["call"])
                if "code" in expect:
                    self.assertIsNotNone(error)
                    self.assertEqual(error.code, grpc.StatusCode[expect["code"]], str(error))
                    for word in expect["message_has"]:
                        self.assertIn(word, error.message)
                    for word in expect.get("message_lacks", []):
                        self.assertNotIn(word, error.message)
                    self.assertEqual(sent, [])
                    continue
                self.assertIsNone(error)
                self.assertEqual(len(sent), 1)
                self.assertEqual(sent[0].metric, case["metric"])
                self.assertEqual(wire_kind(sent[0]), expect["wire"])
                self.assertEqual(dict(sent[0].labels), expect["labels"])
                if "same_as" in expect:
                    by_name_error, by_name = run(self.table, case["metric"], expect["same_as"])
                    self.assertIsNone(by_name_error)
                    self.assertEqual(by_name, sent)

    def test_same_as_compares_reports_drawn_with_the_same_seed_only(self):
        _, a = run(self.table, "vote", {"category": "U"}, seed=11)
        _, b = run(self.table, "vote", {"category": "U"}, seed=12)
        self.assertNotEqual(a[0].report_id, b[0].report_id)

    def test_an_index_that_is_not_an_int_is_refused(self):
        for index in (1.0, True, "1"):
            error, sent = run(self.table, "vote", {"category_index": index})
            self.assertEqual(error.code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("category: index", error.message)
            self.assertEqual(sent, [])


if __name__ == "__main__":
    unittest.main()
