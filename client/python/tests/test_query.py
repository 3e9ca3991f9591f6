"""Unit tests of the QueryClient's result types (issue 29): every field the API serves, NaN for
suppressed and categorical yes/no figures, differences as second minus first, and to_dataframe's
UTC index. The messages are built here as the server sends them; no server is needed. Run with
the installed package (CTest python_sdk_unit)."""
import dataclasses
import math
import unittest
from unittest import mock

import deniable
from deniable import query
from deniable.v1 import design_pb2, query_service_pb2 as q

DAY = 86400
T0 = 1795392000  # 2026-11-23 00:00 UTC


def served_prevalence():
    return q.Prevalence(
        metric="uses_drugs", n=2532, yes_count=1112, yes_share=0.4392, estimate_unbiased=0.3784,
        estimate_clipped=0.3784, standard_error=0.0197, ci_lower=0.3399, ci_upper=0.4172,
        method=q.WILSON, confidence_level=0.95,
        design=design_pb2.Design(version=2, a=0.75, b=0.25, epsilon=math.log(3)),
        epsilon=math.log(3), estimated_yes_count=958.0, combination="by_reports",
        estimand="mean_period_prevalence", periods=4, reporting_period_seconds=DAY,
        variance_bound="minkowski", method_reason="requested",
        interval_construction="wilson in each of 4 periods",
        versions=[q.VersionEstimate(design_version=1, n=1000, yes_count=400,
                                    estimate_unbiased=0.3, standard_error=0.03, a=0.75, b=0.25,
                                    weight=0.4)],
        groups=[q.Prevalence(metric="uses_drugs", n=3, suppressed=True, group_value="X")])


class PrevalenceTest(unittest.TestCase):
    def test_carries_every_field_the_api_serves(self):
        p = query._prevalence(served_prevalence())
        self.assertEqual((p.estimand, p.periods, p.reporting_period_seconds),
                         ("mean_period_prevalence", 4, DAY))
        self.assertEqual((p.variance_bound, p.method_reason, p.interval_construction),
                         ("minkowski", "requested", "wilson in each of 4 periods"))
        self.assertEqual((p.method, p.yes_share, p.estimated_yes_count, p.combination),
                         ("WILSON", 0.4392, 958.0, "by_reports"))
        self.assertEqual((p.design_version, p.design_a, p.design_b), (2, 0.75, 0.25))
        self.assertEqual(p.versions, [deniable.VersionEstimate(1, 1000, 400, 0.3, 0.03, 0.75,
                                                               0.25, 0.4)])
        self.assertFalse(p.suppressed)

    def test_suppressed_group_has_nan_estimates_and_its_n(self):
        g = query._prevalence(served_prevalence()).groups[0]
        self.assertEqual((g.group, g.n, g.suppressed), ("X", 3, True))
        for value in (g.estimate, g.standard_error, g.ci_lower, g.ci_upper):
            self.assertTrue(math.isnan(value), g)

    def test_suppressed_bucket_has_nan_not_zero(self):
        point = query._point(q.Prevalence(n=3, suppressed=True, start_time_seconds=T0,
                                          end_time_seconds=T0 + DAY))
        self.assertEqual((point.n, point.suppressed), (3, True))
        self.assertTrue(math.isnan(point.estimate) and math.isnan(point.ci_lower), point)

    def test_categorical_prevalence_has_nan_yes_no_figures(self):
        served = q.Prevalence(metric="vote", n=100, shares=[q.CategoryShare(
            category="Y", support_count=40, estimate_unbiased=0.34)])
        p = query._prevalence(served)
        self.assertTrue(math.isnan(p.estimate) and math.isnan(p.ci_upper), p)
        self.assertEqual(p.shares[0].estimate, 0.34)


class DifferenceTest(unittest.TestCase):
    def test_states_the_change_as_second_minus_first(self):
        # The wire's difference is first - second: 34.32 % then 32.66 % is +0.0166 there.
        d = query.Difference(first=query._prevalence(served_prevalence()),
                             second=query._prevalence(served_prevalence()), difference=0.0166,
                             standard_error=0.0133, ci_lower=-0.0095, ci_upper=0.0427,
                             confidence_level=0.95)
        self.assertAlmostEqual(d.change, -0.0166)
        self.assertEqual((d.change_ci_lower, d.change_ci_upper), (-0.0427, 0.0095))
        self.assertEqual(d.change_text, "fell by 1.66 points")
        c = deniable.CategoryDifference("Y", -0.0123, 0.035, -0.08, 0.05)
        self.assertEqual((c.change_text, c.change_ci_lower), ("rose by 1.23 points", -0.05))

    def test_change_words(self):
        self.assertEqual(deniable.change_words(0.0166), "rose by 1.66 points")
        self.assertEqual(deniable.change_words(-0.00001), "unchanged (0.00 points)")
        self.assertEqual(deniable.change_words(float("nan")), "unknown")


def served_histogram():
    return q.Prevalence(
        metric="minutes", n=900, design=design_pb2.Design(version=1, epsilon=math.log(3)),
        numeric=q.NumericEstimate(
            lo=0, hi=600, unit="minutes", mechanism="d_bit_flip", mean=math.nan,
            mean_standard_error=math.nan, mean_ci_lower=math.nan, mean_ci_upper=math.nan,
            total=math.nan, total_standard_error=math.nan, total_ci_lower=math.nan,
            total_ci_upper=math.nan, devices=900, simultaneous_method="sidak",
            per_bucket_level=0.975, estimand="period_distribution",
            buckets=[q.NumericBucket(lower=0, upper=300, sampled=450, ones=300,
                                     estimate_unbiased=0.62, estimate_consistent=0.6,
                                     standard_error=0.04, ci_lower=0.54, ci_upper=0.7,
                                     simultaneous_lower=0.52, simultaneous_upper=0.72),
                     q.NumericBucket(lower=300, upper=600, sampled=450, ones=160,
                                     estimate_unbiased=0.38, estimate_consistent=0.4,
                                     standard_error=0.04, ci_lower=0.3, ci_upper=0.46,
                                     simultaneous_lower=0.28, simultaneous_upper=0.48)],
            quantiles=[q.NumericQuantile(level=0.5, value=250, ci_lower=200, ci_upper=310)]),
        groups=[q.Prevalence(metric="minutes", n=4, suppressed=True, group_value="X",
                             numeric=q.NumericEstimate(lo=0, hi=600, mechanism="d_bit_flip",
                                                       devices=4))])


def served_mean():
    return q.Prevalence(
        metric="age", n=2532, yes_count=1300, estimate_unbiased=0.54, standard_error=0.02,
        ci_lower=0.5, ci_upper=0.58, confidence_level=0.95,
        numeric=q.NumericEstimate(lo=0, hi=100, unit="years", mechanism="one_bit_mean",
                                  mean=54.0, mean_standard_error=2.0, mean_ci_lower=50.0,
                                  mean_ci_upper=58.0, total=136728.0,
                                  total_standard_error=5064.0, total_ci_lower=126600.0,
                                  total_ci_upper=146856.0, devices=2532,
                                  estimand="active_device_mean"),
        estimand="active_device_prevalence")


class NumericTest(unittest.TestCase):
    def test_mean_and_total_of_one_bit_mean(self):
        p = query._prevalence(served_mean())
        n = p.numeric
        self.assertIsInstance(n, deniable.NumericEstimate)
        self.assertEqual((n.mechanism, n.unit, n.lo, n.hi), ("one_bit_mean", "years", 0, 100))
        self.assertEqual((n.mean, n.mean_ci_lower, n.mean_ci_upper, n.mean_standard_error),
                         (54.0, 50.0, 58.0, 2.0))
        self.assertEqual((n.total, n.total_ci_lower, n.devices), (136728.0, 126600.0, 2532))
        self.assertEqual((n.buckets, n.quantiles), ([], []))
        self.assertEqual(p.estimate, 0.54)  # the bit's debiased share, on the scale of x / m
        # What the mean is of, in a number's words; the yes/no name stays for older readers.
        self.assertEqual(n.estimand, "active_device_mean")
        self.assertEqual(p.estimand, "active_device_prevalence")

    def test_histogram_buckets_quantiles_and_nan_for_what_is_not_served(self):
        p = query._prevalence(served_histogram())
        n = p.numeric
        self.assertTrue(math.isnan(n.mean) and math.isnan(n.total_ci_upper), n)
        self.assertTrue(math.isnan(p.estimate) and math.isnan(p.ci_lower), p)  # no yes/no bit
        self.assertEqual(n.buckets[1], deniable.NumericBucket(300, 600, 450, 160, 0.38, 0.4, 0.04,
                                                              0.3, 0.46, 0.28, 0.48))
        self.assertEqual(n.quantiles, [deniable.NumericQuantile(0.5, 250, 200, 310)])
        self.assertEqual((n.simultaneous_method, n.per_bucket_level), ("sidak", 0.975))
        self.assertEqual(n.estimand, "period_distribution")
        group = p.groups[0].numeric
        self.assertEqual(group.devices, 4)
        self.assertTrue(math.isnan(group.mean), group)
        self.assertIsNone(query._prevalence(served_prevalence()).numeric)  # yes/no: none

    def test_dataframe_columns_and_bucket_frames(self):
        fake = mock.Mock()
        fake.DataFrame.from_records.side_effect = FakeFrame
        frame = deniable.to_dataframe(query._prevalence(served_mean()), pandas_module=fake)
        self.assertEqual(frame.columns["numeric_mean"], [54.0])
        self.assertEqual(frame.columns["numeric_total_ci_upper"], [146856.0])
        self.assertEqual(frame.columns["numeric_unit"], ["years"])
        self.assertEqual(frame.columns["numeric_estimand"], ["active_device_mean"])
        self.assertNotIn("numeric_buckets", frame.columns)
        self.assertNotIn("numeric", frame.columns)
        buckets = deniable.to_dataframe(query._prevalence(served_histogram()).numeric.buckets,
                                        pandas_module=fake)
        self.assertEqual(buckets.columns["estimate_consistent"], [0.6, 0.4])

    def test_difference_of_a_mean_is_in_its_unit(self):
        d = deniable.Difference(first=query._prevalence(served_mean()),
                                second=query._prevalence(served_mean()), difference=-2.5,
                                standard_error=1.0, ci_lower=-4.5, ci_upper=-0.5,
                                confidence_level=0.95, unit="years")
        self.assertEqual((d.change, d.change_text), (2.5, "rose by 2.5 years"))
        self.assertEqual(dataclasses.replace(d, difference=0.0).change_text,
                         "unchanged (0 years)")
        self.assertEqual(dataclasses.replace(d, unit=None).change_text, "rose by 250.00 points")

    def test_create_metric_request_for_a_numeric_metric(self):
        params = query.design_parameters(numeric=1.1, mechanism="D_BIT_FLIP", buckets=12,
                                         sampled_buckets=3, unit="minutes")
        self.assertEqual(params.numeric.mechanism, design_pb2.D_BIT_FLIP)
        self.assertEqual((params.numeric.buckets, params.numeric.sampled_buckets), (12, 3))
        with self.assertRaises(deniable.DeniableError):
            query.design_parameters(symmetric_epsilon=1.0, buckets=3)
        with self.assertRaises(deniable.DeniableError):
            query.design_parameters(numeric=1.0, mechanism="K_RR")


class FakeFrame:
    """Stands in for pandas when it is absent: records what to_dataframe asks of it."""

    def __init__(self, records):
        self.columns = {k: [r[k] for r in records] for k in records[0]}
        self.index = None

    def pop(self, name):
        return self.columns.pop(name)

    def __setitem__(self, name, value):
        self.columns[name] = value


class ToDataFrameTest(unittest.TestCase):
    def points(self):
        return [query._point(q.Prevalence(n=300, estimate_unbiased=0.3, start_time_seconds=T0,
                                          end_time_seconds=T0 + DAY)),
                query._point(q.Prevalence(n=3, suppressed=True, start_time_seconds=T0 + DAY,
                                          end_time_seconds=T0 + 2 * DAY))]

    def test_series_indexed_by_utc_start(self):
        try:
            import pandas
        except ImportError:
            self.skipTest("pandas absent: ToDataFrameTest.test_series_with_a_fake_pandas runs")
        frame = deniable.to_dataframe(self.points())
        self.assertIsInstance(frame.index, pandas.DatetimeIndex)
        self.assertEqual(str(frame.index.tz), "UTC")
        self.assertEqual(frame.index[0], pandas.Timestamp("2026-11-23", tz="UTC"))
        self.assertEqual(frame["end"].iloc[1], pandas.Timestamp("2026-11-25", tz="UTC"))
        self.assertNotIn("start_time_seconds", frame.columns)
        self.assertEqual(list(frame["n"]), [300, 3])
        self.assertTrue(math.isnan(frame["estimate"].iloc[1]))
        one = deniable.to_dataframe(query._prevalence(served_prevalence()))
        self.assertEqual((len(one), one["estimand"].iloc[0]), (1, "mean_period_prevalence"))

    def test_series_with_a_fake_pandas(self):
        fake = mock.Mock()
        fake.DataFrame.from_records.side_effect = FakeFrame
        fake.to_datetime.side_effect = lambda values, unit, utc: ("utc", unit, utc, values)
        fake.DatetimeIndex.side_effect = lambda values, name: (name, values)
        frame = deniable.to_dataframe(self.points(), pandas_module=fake)
        self.assertEqual(frame.index, ("start", ("utc", "s", True, [T0, T0 + DAY])))
        self.assertEqual(frame.columns["end"], ("utc", "s", True, [T0 + DAY, T0 + 2 * DAY]))
        self.assertNotIn("start_time_seconds", frame.columns)


class FakeChannel:
    """A channel whose every call records its request and answers `response`."""

    def __init__(self, response):
        self.requests, self.response = [], response

    def unary_unary(self, path, request_serializer, response_deserializer):
        def stub(request, timeout, wait_for_ready):
            self.requests.append(request)
            return self.response
        return stub


class IntervalKindTest(unittest.TestCase):
    """interval="ANYTIME" reaches the request, and the answer's interval_kind comes back (issue
    41); an unknown kind names the field before any call."""

    def test_anytime_request_and_answer(self):
        served = served_prevalence()
        served.interval_kind = q.ANYTIME
        served.anytime_tuned_reports = 500
        served.groups[0].interval_kind = q.ANYTIME
        channel = FakeChannel(served)
        c = deniable.QueryClient(channel=channel)
        p = c.prevalence("m", start=T0, end=T0 + DAY, interval="ANYTIME",
                         anytime_tuned_reports=500)
        r = channel.requests[0]
        self.assertEqual((r.interval, r.anytime_tuned_reports), (q.ANYTIME, 500))
        self.assertEqual((p.interval_kind, p.anytime_tuned_reports), ("ANYTIME", 500))
        self.assertEqual(p.groups[0].interval_kind, "ANYTIME")
        c.prevalence("m", interval="fixed")
        c.prevalence("m")
        self.assertEqual([x.interval for x in channel.requests[1:]], [q.FIXED_N, 0])

    def test_series_takes_it_per_bucket(self):
        channel = FakeChannel(q.Series(buckets=[q.Prevalence(n=300, interval_kind=q.ANYTIME,
                                                             anytime_tuned_reports=10000)]))
        c = deniable.QueryClient(channel=channel)
        points = c.series("m", start=T0, end=T0 + DAY, interval="anytime")
        self.assertEqual(channel.requests[0].interval, q.ANYTIME)
        self.assertEqual((points[0].interval_kind, points[0].anytime_tuned_reports),
                         ("ANYTIME", 10000))

    def test_unknown_kind_names_the_field(self):
        channel = FakeChannel(served_prevalence())
        c = deniable.QueryClient(channel=channel)
        with self.assertRaises(deniable.DeniableError) as e:
            c.prevalence("m", interval="sometimes")
        self.assertEqual(e.exception.code, deniable.StatusCode.INVALID_ARGUMENT)
        self.assertIn('interval: unknown value "sometimes"', e.exception.message)
        self.assertEqual(channel.requests, [])


class QueryTimesTest(unittest.TestCase):
    """start/end as the CLI and JS take them (issue 38): "-7d" was a raw protobuf TypeError."""
    NOW = T0 + 12345.6

    def client(self, response):
        channel = FakeChannel(response)
        return deniable.QueryClient(channel=channel, now=lambda: self.NOW), channel

    def test_relative_times_count_back_from_now(self):
        c, channel = self.client(q.Series())
        c.series("m", start="-7d", end="now")
        c.series("m", start="-24h", end="-90m")
        c.series("m", start="-2w", end="-30s")
        now = int(self.NOW)
        self.assertEqual([(r.start_time_seconds, r.end_time_seconds) for r in channel.requests],
                         [(now - 7 * DAY, now), (now - DAY, now - 90 * 60),
                          (now - 14 * DAY, now - 30)])

    def test_prevalence_and_difference_take_them_too(self):
        c, channel = self.client(served_prevalence())
        c.prevalence("m", start="-7d")
        self.assertEqual((channel.requests[0].start_time_seconds,
                          channel.requests[0].end_time_seconds), (int(self.NOW) - 7 * DAY, 0))
        c, channel = self.client(q.Difference(first=served_prevalence(),
                                              second=served_prevalence()))
        c.difference("m", ("-14d", "-7d"), ("-7d", "now"))
        r = channel.requests[0]
        self.assertEqual((r.first.start_time_seconds, r.second.end_time_seconds),
                         (int(self.NOW) - 14 * DAY, int(self.NOW)))

    def test_unix_seconds_and_datetimes(self):
        import datetime
        c, channel = self.client(q.Series())
        utc = datetime.timezone.utc
        c.series("m", start=datetime.datetime(2026, 11, 23), end=datetime.datetime(
            2026, 11, 24, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=2))))
        c.series("m", start=T0, end=T0 + DAY)
        self.assertEqual([(r.start_time_seconds, r.end_time_seconds) for r in channel.requests],
                         [(T0, T0 + DAY), (T0, T0 + DAY)])
        self.assertEqual(datetime.datetime(2026, 11, 23, tzinfo=utc).timestamp(), T0)

    def test_anything_else_names_the_field(self):
        c, channel = self.client(q.Series())
        for bad, field in (("yesterday", "start"), ("-7x", "start"), (-5, "start"),
                           (1.5, "start"), (True, "start")):
            with self.assertRaises(deniable.DeniableError) as e:
                c.series("m", start=bad, end="now")
            self.assertEqual(e.exception.code, deniable.StatusCode.INVALID_ARGUMENT)
            self.assertIn(f"{field}: must be Unix seconds", e.exception.message)
            self.assertIn(repr(bad), e.exception.message)
        with self.assertRaises(deniable.DeniableError) as e:
            c.difference("m", ("-7d", "soon"), (0, 0))
        self.assertIn("first[1]: must be", e.exception.message)
        self.assertEqual(channel.requests, [])


if __name__ == "__main__":
    unittest.main()
