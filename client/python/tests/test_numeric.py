"""Unit tests of the Python SDK's numeric reports (issue 28): clipping and its counter,
alpha-point rounding and the device's alpha kept in the device file, the memo and ledger per
level, the cap, the wire form of 1BitMean and dBitFlip, the channels by exact enumeration, and
the errors for the wrong kind of metric. Run with the installed package (CTest
python_sdk_unit)."""
import math
import os
import sqlite3
import tempfile
import unittest
from unittest import mock

import grpc

import deniable
from deniable import numeric
from deniable.v1 import design_pb2, metric_pb2, report_service_pb2

from test_categorical import enumerate_outcomes

T0 = 1795435200  # 2026-11-23 12:00 UTC
DAY = 86400
EPS = math.log(3)


def numeric_response(metric, mechanism, edges, sampled=0, version=1, epsilon=EPS):
    d = numeric.make_design(mechanism, epsilon, edges, sampled)
    a, b = numeric.channel(d)
    return report_service_pb2.GetDesignResponse(
        metric=metric, time_precision_seconds=3600, reporting_period_seconds=DAY,
        design_fingerprint=0x77,
        range=metric_pb2.NumericRange(lo=edges[0], hi=edges[-1], unit="minutes"),
        design=design_pb2.Design(
            version=version, epsilon=numeric.local_epsilon(d), a=a, b=b,
            parameters=design_pb2.DesignParameters(numeric=design_pb2.Numeric(
                mechanism=mechanism, epsilon=epsilon, bucket_edges=edges,
                buckets=len(edges) - 1, sampled_buckets=sampled, unit="minutes"))))


class FakeCollector:
    """GetDesign: "mean" (ONE_BIT_MEAN on the grid 0, 25, .., 100), "hist" (D_BIT_FLIP, k = 4,
    d = 2), "yesno" (a yes/no design) and "vote" (k-RR over Y, N); SubmitReports keeps what it
    receives."""

    def __init__(self):
        self.received = []
        self.responses = {
            "mean": numeric_response("mean", design_pb2.ONE_BIT_MEAN, [0, 25, 50, 75, 100]),
            "hist": numeric_response("hist", design_pb2.D_BIT_FLIP, [0, 10, 20, 40, 80], 2),
            "yesno": report_service_pb2.GetDesignResponse(
                metric="yesno", time_precision_seconds=3600, reporting_period_seconds=DAY,
                design=design_pb2.Design(version=1, a=0.75, b=0.25, epsilon=EPS)),
        }

    def unary_unary(self, path, request_serializer, response_deserializer):
        return self._design if path.endswith("GetDesign") else self._submit

    def close(self):
        pass

    def _design(self, request, timeout=None, wait_for_ready=None):
        if request.metric not in self.responses:
            raise DeniableErrorRpc()
        return self.responses[request.metric]

    def _submit(self, request, timeout=None, wait_for_ready=None):
        self.received.extend(request.reports)
        return report_service_pb2.SubmitReportsResponse(accepted=len(request.reports))


class DeniableErrorRpc(grpc.RpcError):
    def code(self):
        return grpc.StatusCode.NOT_FOUND

    def details(self):
        return "unknown metric"


class Clock:
    def __init__(self):
        self.t = T0

    def __call__(self):
        return self.t


def make_reporter(collector, **options):
    defaults = dict(channel=collector, background_sending=False, clock=Clock(),
                    shutdown_drain_timeout=0)
    defaults.update(options)
    return deniable.Reporter(**defaults)


class LevelTest(unittest.TestCase):
    """Clipping and levels, as common/numeric.h states them."""

    def setUp(self):
        self.mean = numeric.make_design(numeric.ONE_BIT_MEAN, EPS, [0, 25, 50, 75, 100])
        self.hist = numeric.make_design(numeric.D_BIT_FLIP, EPS, [0, 10, 20, 40, 80], 2)

    def test_clip_takes_the_nearest_end(self):
        self.assertEqual(numeric.clip(self.mean, -3), (0.0, True))
        self.assertEqual(numeric.clip(self.mean, 1e9), (100.0, True))
        self.assertEqual(numeric.clip(self.mean, math.inf), (100.0, True))
        self.assertEqual(numeric.clip(self.mean, 100), (100.0, False))
        self.assertEqual(numeric.clip(self.mean, 0), (0.0, False))
        self.assertEqual(numeric.clip(self.mean, 42.5), (42.5, False))

    def test_alpha_point_rounding_goes_up_when_the_fraction_exceeds_alpha(self):
        # 30 is 1/5 of the way from 25 to 50.
        self.assertEqual(numeric.level_of(self.mean, 30, 0.0), 2)
        self.assertEqual(numeric.level_of(self.mean, 30, 0.19), 2)
        self.assertEqual(numeric.level_of(self.mean, 30, 0.2), 1)  # r > alpha is strict
        self.assertEqual(numeric.level_of(self.mean, 30, 0.99), 1)
        self.assertEqual(numeric.level_of(self.mean, 25, 0.0), 1)  # an edge is its own level
        self.assertEqual(numeric.level_of(self.mean, 0, 0.0), 0)
        self.assertEqual(numeric.level_of(self.mean, 100, 0.999), 4)

    def test_alpha_point_rounding_is_unbiased_over_alpha(self):
        # Over alpha on a fine grid, the mean of the level's edge is the value (up to the grid).
        steps = 10000
        for x in (0.0, 3.0, 30.0, 61.25, 99.9, 100.0):
            edges = self.mean.edges
            mean_edge = sum(edges[numeric.level_of(self.mean, x, (i + 0.5) / steps)]
                            for i in range(steps)) / steps
            self.assertAlmostEqual(mean_edge, x, delta=25.0 / steps + 1e-9)

    def test_d_bit_flip_level_is_the_bucket(self):
        self.assertEqual([numeric.level_of(self.hist, x, 0.5) for x in (0, 9.99, 10, 39, 40, 80)],
                         [0, 0, 1, 2, 3, 3])

    def test_designs_are_checked(self):
        with self.assertRaisesRegex(deniable.DeniableError, "bucket_edges"):
            numeric.make_design(numeric.ONE_BIT_MEAN, EPS, [0, 0, 1])
        with self.assertRaisesRegex(deniable.DeniableError, "sampled_buckets"):
            numeric.make_design(numeric.D_BIT_FLIP, EPS, [0, 1, 2], 3)
        with self.assertRaisesRegex(deniable.DeniableError, "epsilon"):
            numeric.make_design(numeric.D_BIT_FLIP, 0.0, [0, 1, 2])
        self.assertEqual(numeric.make_design(numeric.D_BIT_FLIP, EPS, [0, 1, 2]).sampled_buckets,
                         2)  # 0 means k
        response = numeric_response("m", design_pb2.ONE_BIT_MEAN, [0, 50, 100])
        response.range.hi = 90
        with self.assertRaisesRegex(deniable.DeniableError, "range"):
            numeric.design_from_wire(response.design, response.range)
        response = numeric_response("m", design_pb2.D_BIT_FLIP, [0, 50, 100])
        response.design.a = 0.75  # ONE_BIT_MEAN's channel, not this design's
        with self.assertRaisesRegex(deniable.DeniableError, "design: channel"):
            numeric.design_from_wire(response.design, response.range)

    def test_the_ledger_counts_the_local_epsilon_of_a_report(self):
        self.assertEqual(numeric.local_epsilon(self.mean), EPS)
        self.assertEqual(numeric.local_epsilon(self.hist), EPS)  # d = 2
        one = numeric.make_design(numeric.D_BIT_FLIP, EPS, [0, 10, 20, 40, 80], 1)
        self.assertEqual(numeric.local_epsilon(one), EPS / 2)  # one bucket's bit
        collector = FakeCollector()
        collector.responses["one"] = numeric_response("one", design_pb2.D_BIT_FLIP,
                                                      [0, 10, 20, 40, 80], 1)
        r = make_reporter(collector, seed=8)
        r.report_value("one", 15)
        self.assertAlmostEqual(r.ledger()["one"].epsilon_spent, EPS / 2)


class ChannelTest(unittest.TestCase):
    """The randomizers' channels, by exact enumeration of their draws."""

    def test_one_bit_mean_is_dky17_equation_1(self):
        d = numeric.make_design(numeric.ONE_BIT_MEAN, EPS, [0, 25, 50, 75, 100])
        e = math.exp(EPS)
        for level in range(5):
            outcomes, _ = enumerate_outcomes(
                lambda rng, level=level: numeric.randomize(d, level, rng).bit)
            t = d.edges[level] / 100.0
            self.assertAlmostEqual(outcomes[1], 1 / (e + 1) + t * (e - 1) / (e + 1), places=14)

    def test_d_bit_flip_samples_d_buckets_uniformly_and_flips_each(self):
        d = numeric.make_design(numeric.D_BIT_FLIP, EPS, [0, 10, 20, 40, 80], 2)
        a = math.exp(EPS / 2)
        for level in range(4):
            outcomes, _ = enumerate_outcomes(
                lambda rng, level=level: tuple(zip(*(lambda r: (r.numeric.buckets,
                                                               r.numeric.bits))(
                    numeric.randomize(d, level, rng)))))
            self.assertAlmostEqual(sum(outcomes.values()), 1.0, places=14)
            sampled = [0.0] * 4
            ones = [0.0] * 4
            for pairs, prob in outcomes.items():
                self.assertEqual(len(pairs), 2)
                self.assertLess(pairs[0][0], pairs[1][0])  # ascending, distinct
                for bucket, bit in pairs:
                    sampled[bucket] += prob
                    ones[bucket] += prob * bit
            for j in range(4):
                self.assertAlmostEqual(sampled[j], 0.5, places=14)  # d / k
                want = a / (a + 1) if j == level else 1 / (a + 1)
                self.assertAlmostEqual(ones[j] / sampled[j], want, places=14)


class ReportValueTest(unittest.TestCase):
    def setUp(self):
        self.collector = FakeCollector()

    def test_one_bit_mean_sends_a_bit_and_d_bit_flip_sends_buckets_and_bits(self):
        r = make_reporter(self.collector, seed=5)
        self.assertTrue(r.report_value("mean", 40))
        self.assertTrue(r.report_value("hist", 33.0))
        r.flush(5)
        mean, hist = self.collector.received
        self.assertFalse(mean.HasField("numeric"))
        self.assertFalse(mean.HasField("categorical"))
        self.assertEqual(mean.design_fingerprint, 0x77)
        self.assertEqual(hist.bit, 0)
        self.assertEqual(len(hist.numeric.buckets), 2)
        self.assertEqual(len(hist.numeric.bits), 2)
        self.assertEqual(list(hist.numeric.buckets), sorted(set(hist.numeric.buckets)))
        self.assertTrue(all(0 <= b < 4 for b in hist.numeric.buckets))
        self.assertEqual(mean.event_time_seconds, T0 - T0 % 3600)

    def test_values_outside_the_range_are_clipped_and_counted(self):
        r = make_reporter(self.collector, seed=1, one_report_per_period=False)
        for value in (-5, 50, 1e12, 100):
            r.report_value("mean", value)
        self.assertEqual(r.stats().values_clipped, 2)
        self.assertEqual(r.ledger()["mean"].values_clipped, 2)
        # The clipped values took the ends' levels: 0 and 4 (memoized once each), 50 level 2,
        # 100 the memo of level 4: three draws.
        self.assertEqual(r.ledger()["mean"].randomizations, 3)

    def test_alpha_is_drawn_once_with_secrets_and_kept_in_the_device_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "device.db")
            with mock.patch("deniable.reporter.secrets.randbelow",
                            wraps=deniable.reporter.secrets.randbelow) as randbelow:
                r = make_reporter(self.collector, store_path=path)
                r.report_value("mean", 30)
                self.assertTrue(any(c.args == (1 << 53,) for c in randbelow.call_args_list))
                r.close()
            with sqlite3.connect(path) as db:
                rows = db.execute("SELECT metric, alpha FROM numeric_alpha").fetchall()
            self.assertEqual(len(rows), 1)
            metric, alpha = rows[0]
            self.assertEqual(metric, "mean")
            self.assertTrue(0.0 <= alpha < 1.0)
            # A new reporter on the file keeps it, whatever its own generator would draw.
            clock = Clock()
            r = make_reporter(self.collector, store_path=path, seed=99, clock=clock)
            for day in range(1, 4):
                clock.t = T0 + day * DAY
                r.report_value("mean", 30)
            r.close()
            with sqlite3.connect(path) as db:
                self.assertEqual(db.execute("SELECT alpha FROM numeric_alpha").fetchall(),
                                 [(alpha,)])
                levels = db.execute("SELECT level FROM numeric_memo").fetchall()
            self.assertEqual(levels, [(2 if 0.2 > alpha else 1,)])

    def test_a_d_bit_flip_metric_draws_no_alpha(self):
        r = make_reporter(self.collector, seed=3)
        r.report_value("hist", 12)
        with r._store._tx() as db:
            self.assertEqual(db.execute("SELECT COUNT(*) FROM numeric_alpha").fetchone(), (0,))

    def test_memo_per_level_and_ledger_per_distinct_level_with_the_cap(self):
        clock = Clock()
        r = make_reporter(self.collector, seed=11, clock=clock, max_epsilon_per_metric=2.5 * EPS)
        answers = []
        for day, value in enumerate((12, 15, 19, 12)):  # bucket 1 of hist every day
            clock.t = T0 + day * DAY
            self.assertTrue(r.report_value("hist", value))
        r.flush(5)
        answers = [(tuple(x.numeric.buckets), tuple(x.numeric.bits))
                   for x in self.collector.received]
        self.assertEqual(len(set(answers)), 1)  # one memoized report, re-sent
        self.assertEqual(len({x.report_id for x in self.collector.received}), 4)
        ledger = r.ledger()["hist"]
        self.assertEqual((ledger.randomizations, ledger.reports_accepted), (1, 4))
        self.assertAlmostEqual(ledger.epsilon_spent, EPS)
        clock.t = T0 + 4 * DAY
        r.report_value("hist", 50)  # bucket 3: a second distinct level
        self.assertAlmostEqual(r.ledger()["hist"].epsilon_spent, 2 * EPS)
        clock.t = T0 + 5 * DAY
        with self.assertRaises(deniable.DeniableError) as e:
            r.report_value("hist", 0)  # a third level would pass the cap
        self.assertEqual(e.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertTrue(r.report_value("hist", 11))  # memoized: free
        self.assertAlmostEqual(r.ledger()["hist"].epsilon_spent, 2 * EPS)

    def test_one_report_per_period(self):
        r = make_reporter(self.collector, seed=2)
        self.assertTrue(r.report_value("mean", 10))
        again = r.report_value("mean", 90)
        self.assertEqual(again.outcome, deniable.ReportOutcome.ALREADY_REPORTED)
        self.assertEqual(r.pending(), 1)

    def test_wrong_kind_and_bad_values_are_refused_and_queue_nothing(self):
        r = make_reporter(self.collector, seed=4)
        with self.assertRaises(deniable.DeniableError) as e:
            r.report_value("yesno", 3.0)
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("metric: \"yesno\" is not a numeric metric", e.exception.message)
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("mean", True)
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertTrue(e.exception.message.startswith("metric: \"mean\" is a numeric metric"))
        self.assertIn("report_value", e.exception.message)
        for bad in ("41", True, None, [1]):
            with self.assertRaises(deniable.DeniableError) as e:
                r.report_value("mean", bad)
            self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertTrue(e.exception.message.startswith("value: "))
        with self.assertRaises(deniable.DeniableError) as e:
            r.report_value("mean", math.nan)
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(r.pending(), 0)
        self.assertEqual(r.ledger(), {})

    def test_design_mismatch_forgets_the_numeric_memo(self):
        r = make_reporter(self.collector, seed=6)
        r.report_value("hist", 12)
        self.assertIsNotNone(r._store.lookup_numeric_memo("hist", 1, 1))
        r._store.forget_design("hist", 1)
        self.assertIsNone(r._store.lookup_numeric_memo("hist", 1, 1))


if __name__ == "__main__":
    unittest.main()
