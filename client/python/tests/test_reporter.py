"""Unit tests of the Python Reporter against a scripted collector (a fake channel): the
delivery contract and the privacy rules, as the C++ and JS SDKs test them. Run with the
installed package: python -m unittest discover -s client/python/tests (CTest python_sdk_unit)."""
import math
import secrets
import unittest
from unittest import mock

import grpc

import deniable
from deniable.v1 import design_pb2, report_service_pb2

A = math.e / (1 + math.e)
B = 1 / (1 + math.e)
T0 = 1795435200  # 2026-11-23 12:00 UTC


class _RpcError(grpc.RpcError):
    def __init__(self, code, details):
        super().__init__()
        self._code, self._details = code, details

    def code(self):
        return self._code

    def details(self):
        return self._details


class FakeCollector:
    """A channel whose GetDesign answers one design and whose SubmitReports follows `script`
    (a grpc.StatusCode to fail the call, a list of rejections, or a function), then accepts."""

    def __init__(self, randomization=design_pb2.MEMOIZED, period=86400):
        self.randomization, self.period = randomization, period
        self.script, self.received, self.stored, self.calls = [], [], set(), 0
        self.fingerprint, self.design_calls = 0x77, 0
        self.window_firsts_off, self.reporting_once = False, False

    def unary_unary(self, path, request_serializer, response_deserializer):
        return self._design if path.endswith("GetDesign") else self._submit

    def close(self):
        pass

    def _design(self, request, timeout=None, wait_for_ready=None):
        if request.metric == "unknown":
            raise _RpcError(grpc.StatusCode.NOT_FOUND, 'metric: "unknown" does not exist')
        self.design_calls += 1
        return report_service_pb2.GetDesignResponse(
            design_fingerprint=self.fingerprint,
            metric=request.metric, time_precision_seconds=3600,
            reporting_period_seconds=self.period, randomization=self.randomization,
            window_firsts_off=self.window_firsts_off, reporting_once=self.reporting_once,
            design=design_pb2.Design(version=1, a=A, b=B, epsilon=1.0))

    def _submit(self, request, timeout=None, wait_for_ready=None):
        self.calls += 1
        step = self.script.pop(0) if self.script else None
        if isinstance(step, grpc.StatusCode):
            raise _RpcError(step, f"scripted {step.name}")
        if callable(step):
            return step(request.reports, self)
        return self.accept(request.reports, step or [])

    def accept(self, reports, rejections=()):
        rejected = {r.index for r in rejections}
        response = report_service_pb2.SubmitReportsResponse(rejections=list(rejections))
        for i, r in enumerate(reports):
            if i in rejected:
                continue
            self.received.append(r)
            if r.report_id in self.stored:
                response.duplicates += 1
            else:
                self.stored.add(r.report_id)
                response.accepted += 1
        return response


def reporter(collector, **options):
    defaults = dict(channel=collector, background_sending=False, clock=lambda: T0,
                    initial_backoff=0.001, max_backoff=0.002, shutdown_drain_timeout=0)
    defaults.update(options)
    return deniable.Reporter(**defaults)


def rejection(index, code, permanent):
    return report_service_pb2.ReportRejection(index=index, code=code.value[0],
                                              reason=f"reports[{index}]: scripted",
                                              permanent=permanent)


class ReporterTest(unittest.TestCase):
    def test_randomness_comes_from_secrets(self):
        c = FakeCollector()
        with mock.patch.object(secrets, "randbelow", wraps=secrets.randbelow) as draws, \
                mock.patch.object(secrets, "token_bytes", wraps=secrets.token_bytes) as ids:
            result = reporter(c).report("m", True)
        self.assertIs(result.outcome, deniable.ReportOutcome.QUEUED)
        self.assertEqual(len(result.report_id), 16)
        self.assertEqual(draws.call_count, 1)
        self.assertEqual(ids.call_count, 1)

    def test_memoizes_and_counts_epsilon_once(self):
        c = FakeCollector()
        r = reporter(c, one_report_per_period=False)
        for _ in range(100):
            r.report("m", True)
        r.flush(5)
        self.assertEqual(len({x.bit for x in c.received}), 1)
        ledger = r.ledger()["m"]
        self.assertEqual((ledger.reports_accepted, ledger.reports_acknowledged,
                          ledger.randomizations), (100, 100, 1))
        self.assertAlmostEqual(ledger.epsilon_spent, 1.0)
        self.assertAlmostEqual(ledger.epsilon_if_fresh, 100.0)

    def test_one_report_per_period_then_the_memoized_bit_again(self):
        now = [T0]
        c = FakeCollector(period=3600)
        r = reporter(c, clock=lambda: now[0])
        self.assertTrue(r.report("m", True))
        again = r.report("m", False)
        self.assertFalse(again)
        self.assertIs(again.outcome, deniable.ReportOutcome.ALREADY_REPORTED)
        self.assertIsNone(again.report_id)
        self.assertIn("already reported this period", str(again))
        self.assertIn("nothing sent", str(again))
        self.assertEqual(r.ledger()["m"].reports_repeated_in_period, 1)
        now[0] += 3600
        self.assertTrue(r.report("m", True))
        r.flush(5)
        self.assertEqual([x.bit for x in c.received][0], [x.bit for x in c.received][1])
        self.assertEqual(c.received[1].event_time_seconds, T0 + 3600)

    def test_window_flags_follow_the_calendar_and_once_sends_one_report(self):
        now = [T0]  # Monday 2026-11-23 12:00 UTC
        c = FakeCollector(period=3600)
        r = reporter(c, clock=lambda: now[0])
        for step in (0, 3600, 86400, 7 * 86400):  # same day; next day; Tue 1 Dec
            now[0] += step
            self.assertTrue(r.report("m", True))
        r.flush(5)
        flags = [(x.window_firsts.day, x.window_firsts.week, x.window_firsts.month)
                 for x in c.received]
        self.assertEqual(flags, [(True, True, True), (False, False, False),
                                 (True, False, False), (True, True, True)])
        off = FakeCollector()
        off.window_firsts_off = True
        r = reporter(off)
        r.report("m", True)
        r.flush(5)
        self.assertFalse(off.received[0].HasField("window_firsts"))
        once = FakeCollector()
        once.reporting_once = True
        now = [T0]
        r = reporter(once, clock=lambda: now[0])
        self.assertTrue(r.report("m", True))
        now[0] += 30 * 86400
        self.assertFalse(r.report("m", True))
        r.flush(5)
        self.assertEqual(len(once.received), 1)

    def test_fresh_randomization_needs_a_cap_and_stops_at_it(self):
        fresh = design_pb2.FRESH_PER_PERIOD
        with self.assertRaises(deniable.DeniableError) as e:
            reporter(FakeCollector(fresh)).report("m", True)
        self.assertEqual(e.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        r = reporter(FakeCollector(fresh), one_report_per_period=False,
                     max_epsilon_per_metric=2.5)
        r.report("m", True)
        r.report("m", True)
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("m", True)
        self.assertEqual(e.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertEqual(r.pending(), 2)

    def test_every_code_but_invalid_argument_is_retried_and_delivered_once(self):
        for code in grpc.StatusCode:
            if code in (grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT):
                continue
            c = FakeCollector()
            r = reporter(c, one_report_per_period=False)
            for i in range(3):
                r.report("m", i % 2 == 0)
            c.script = [code, code]
            r.flush(5)
            stats = r.stats()
            self.assertEqual((len(c.stored), stats.queued, stats.failed_attempts,
                              stats.dropped_rejected), (3, 0, 2, 0), code)

    def test_invalid_argument_halves_the_batch_down_to_the_bad_report(self):
        c = FakeCollector()
        r = reporter(c, one_report_per_period=False)
        for _ in range(8):
            r.report("m", True)
        first = []

        def judge(reports, collector):
            first.append(len(reports))
            if not hasattr(collector, "bad"):
                collector.bad = reports[5].report_id
            if any(x.report_id == collector.bad for x in reports):
                raise _RpcError(grpc.StatusCode.INVALID_ARGUMENT, "reports[0].labels: bad")
            return collector.accept(reports)
        c.script = [judge] * 20
        with self.assertRaises(deniable.DeniableError) as e:
            r.flush(5)
        self.assertIn("dropped 1 report", e.exception.message)
        stats = r.stats()
        self.assertEqual((first[0], len(c.stored), stats.dropped_rejected), (8, 7, 1))
        self.assertGreaterEqual(stats.batch_splits, 3)

    def test_per_report_rejections_permanent_dropped_others_kept(self):
        c = FakeCollector()
        r = reporter(c, one_report_per_period=False)
        for _ in range(4):
            r.report("m", True)
        c.script = [[rejection(1, grpc.StatusCode.INVALID_ARGUMENT, True),
                     rejection(2, grpc.StatusCode.NOT_FOUND, False)]]
        r.flush(5)  # the kept report is re-sent and accepted
        stats = r.stats()
        self.assertEqual((len(c.stored), stats.dropped_rejected, stats.kept_after_rejection,
                          stats.queued), (3, 1, 1, 0))

    def test_design_mismatch_drops_only_that_report_forgets_the_memo_and_refetches(self):
        c = FakeCollector()
        r = reporter(c, one_report_per_period=False)
        r.report("m", True)
        r.flush(5)
        self.assertEqual([x.design_fingerprint for x in c.received], [0x77])
        r.report("m", True)  # the memoized bit again, with the cached design's fingerprint
        r.report("m", False)
        self.assertEqual(r.ledger()["m"].randomizations, 2)
        c.fingerprint = 0x88  # the collector's database was recreated
        c.script = [[report_service_pb2.ReportRejection(
            index=0, code=grpc.StatusCode.FAILED_PRECONDITION.value[0], permanent=True,
            reason="reports[0].design_fingerprint: not the fingerprint of m v1")]]
        with self.assertRaises(deniable.DeniableError) as e:
            r.flush(5)
        self.assertEqual(e.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("dropped 1 reports", e.exception.message)
        stats = r.stats()
        self.assertEqual((stats.dropped_design_mismatch, stats.dropped_rejected, stats.queued,
                          len(c.received)), (1, 0, 0, 2))
        self.assertEqual(c.design_calls, 2, "the design was not fetched again")
        # Never randomized again: the dropped report is gone, not re-queued.
        self.assertEqual(r.ledger()["m"].randomizations, 2)
        # The memo of v1 is forgotten: a "yes" now draws afresh with the collector's design.
        r.report("m", True)
        self.assertEqual(r.ledger()["m"].randomizations, 3)
        r.flush(5)
        self.assertEqual(c.received[-1].design_fingerprint, 0x88)

    def test_old_reports_and_a_full_queue_are_dropped_and_counted(self):
        now = [T0]
        c = FakeCollector()
        r = reporter(c, clock=lambda: now[0], one_report_per_period=False,
                     max_queued_reports=3, max_report_age=7200)
        for _ in range(5):
            r.report("m", True)
        self.assertEqual((r.stats().queued, r.stats().dropped_queue_full), (3, 2))
        now[0] += 3 * 3600
        r.flush(5)
        self.assertEqual((r.stats().dropped_too_old, c.calls), (3, 0))

    def test_bad_options_name_the_field(self):
        with self.assertRaises(deniable.DeniableError) as e:
            reporter(FakeCollector(), max_batch_reports=0)
        self.assertIn("max_batch_reports", e.exception.message)
        r = reporter(FakeCollector())
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("", True)
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("unknown", True)
        self.assertEqual(e.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertEqual(r.pending(), 0)


if __name__ == "__main__":
    unittest.main()
