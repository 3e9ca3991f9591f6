"""The Python SDK's heavy-hitters randomizer (deniable.heavy_hitters) against the golden vectors
tests/golden/heavy_hitters_vectors.json, which the C++ and JS SDKs check too (issue 40): the
raw hash table, the group draw, every group's prefix and hashes, and the reports. Then
Reporter.report_string: the wire form, the group drawn once with `secrets` and kept, the memo
per value keyed by an HMAC (no value in the device file), the ledger and cap, the errors. Run
with the installed package (CTest python_sdk_unit)."""
import json
import math
import os
import sqlite3
import tempfile
import unittest
from unittest import mock

import grpc

import deniable
from deniable import categorical, heavy_hitters, query, randomizer
from deniable.errors import DeniableError, StatusCode
from deniable.v1 import design_pb2, query_service_pb2, report_service_pb2

import test_numeric

T0 = 1795435200  # 2026-11-23 12:00 UTC
DAY = 86400
EPS = math.log(3)

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
                       "golden", "heavy_hitters_vectors.json")


def load():
    with open(VECTORS, encoding="utf-8") as f:
        return json.load(f)


def design_of(d):
    return heavy_hitters.make_design(epsilon=d["epsilon"], max_length=d["max_length"],
                                     rows=d["rows"], width=d["width"],
                                     holdout_share=d["holdout_share"], salt=int(d["salt"]))


class HeavyHittersVectorsTest(unittest.TestCase):
    def test_the_raw_hash_table(self):
        hashes = load()["hashes"]
        self.assertGreater(len(hashes), 100)
        for h in hashes:
            got = heavy_hitters.sketch_hash(int(h["salt"]), h["width"], h["group"], h["row"],
                                            bytes.fromhex(h["prefix_hex"]))
            self.assertEqual(got, h["hash"], h)

    def test_every_design_value_group_and_report(self):
        vectors = load()["vectors"]
        self.assertGreaterEqual(len(vectors), 4)
        reports = 0
        for v in vectors:
            d = design_of(v["design"])
            self.assertAlmostEqual(d.keep_probability, v["design"]["keep_probability"],
                                   delta=1e-15)
            for g in v["group_draws"]:
                draws = randomizer.UniformDraws(g["uniforms"])
                self.assertEqual(heavy_hitters.draw_group(d, draws), g["group"], (v["name"], g))
                self.assertEqual(draws.used, len(g["uniforms"]))
            for entry in v["values"]:
                value = bytes.fromhex(entry["value_hex"])
                self.assertEqual(heavy_hitters.value_bytes(entry["value"]), value)
                heavy_hitters.validate_value(d, value)
                self.assertEqual(len(entry["groups"]), d.levels + 1)
                for g in entry["groups"]:
                    where = (v["name"], entry["value_hex"], g["group"])
                    p = heavy_hitters.prefix(value, g["group"])
                    self.assertEqual(p.hex(), g["prefix_hex"], where)
                    self.assertEqual([heavy_hitters.sketch_hash(d.salt, d.width, g["group"], row,
                                                                p) for row in range(d.rows)],
                                     g["hashes"], where)
                    for r in g["reports"]:
                        draws = randomizer.UniformDraws(r["uniforms"])
                        got = heavy_hitters.randomize(d, value, g["group"], draws)
                        want = r["report"]
                        self.assertEqual((got.heavy_hitters.group, got.heavy_hitters.row,
                                          got.heavy_hitters.coefficient, got.bit),
                                         (want["group"], want["row"], want["coefficient"],
                                          want["bit"]), where)
                        self.assertEqual(draws.used, 3)
                        reports += 1
        self.assertGreater(reports, 100)


class HeavyHittersValueTest(unittest.TestCase):
    def test_str_is_utf8_and_bad_values_name_value_not_the_value(self):
        d = heavy_hitters.make_design(max_length=4)
        self.assertEqual(heavy_hitters.value_bytes("é"), b"\xc3\xa9")
        self.assertEqual(heavy_hitters.value_bytes(bytearray(b"ab")), b"ab")
        for bad, words in (("secret", "has 6 bytes; the metric allows at most 4"),
                           (b"a\0b", "NUL byte at offset 1")):
            with self.assertRaises(DeniableError) as e:
                heavy_hitters.validate_value(d, heavy_hitters.value_bytes(bad))
            self.assertEqual(e.exception.code, StatusCode.INVALID_ARGUMENT)
            self.assertIn("value: ", str(e.exception))
            self.assertIn(words, str(e.exception))
            self.assertNotIn("secret", str(e.exception))
        for bad in (12, None, "\ud800"):
            with self.assertRaises(DeniableError) as e:
                heavy_hitters.value_bytes(bad)
            self.assertIn("value: ", str(e.exception))

    def test_design_limits_name_the_field(self):
        for kwargs, field in (({"epsilon": 0}, "epsilon"), ({"max_length": 65}, "max_length"),
                              ({"rows": 0}, "rows"), ({"width": 1000}, "width"),
                              ({"holdout_share": 1.0}, "holdout_share"),
                              ({"salt": 1 << 64}, "salt")):
            with self.assertRaises(DeniableError) as e:
                heavy_hitters.make_design(**kwargs)
            self.assertIn(f"heavy_hitters.{field}: ", str(e.exception))


if __name__ == "__main__":
    unittest.main()


def hh_response(metric, version=1, max_length=8, salt=0x1234):
    d = heavy_hitters.make_design(max_length=max_length, rows=4, width=64, salt=salt)
    return report_service_pb2.GetDesignResponse(
        metric=metric, time_precision_seconds=3600, reporting_period_seconds=DAY,
        design_fingerprint=0x55,
        design=design_pb2.Design(
            version=version, epsilon=d.epsilon, a=d.keep_probability,
            b=1 - d.keep_probability,
            parameters=design_pb2.DesignParameters(heavy_hitters=design_pb2.HeavyHitters(
                epsilon=d.epsilon, max_length=max_length, rows=4, width=64,
                holdout_share=0.25, salt=salt))))


class FakeCollector:
    """GetDesign: "app" (heavy hitters, max_length 8, 4 x 64), "yesno", "vote" (k-RR over Y,
    N) and "mean" (a numeric metric); SubmitReports keeps what it receives."""

    def __init__(self):
        self.received = []
        self.responses = {
            "app": hh_response("app"),
            "yesno": report_service_pb2.GetDesignResponse(
                metric="yesno", time_precision_seconds=3600, reporting_period_seconds=DAY,
                design=design_pb2.Design(version=1, a=0.75, b=0.25, epsilon=EPS)),
            "vote": test_categorical_response("vote"),
            "mean": test_numeric.numeric_response("mean", design_pb2.ONE_BIT_MEAN, [0, 50, 100]),
        }

    def unary_unary(self, path, request_serializer, response_deserializer):
        return self._design if path.endswith("GetDesign") else self._submit

    def close(self):
        pass

    def _design(self, request, timeout=None, wait_for_ready=None):
        return self.responses[request.metric]

    def _submit(self, request, timeout=None, wait_for_ready=None):
        self.received.extend(request.reports)
        return report_service_pb2.SubmitReportsResponse(accepted=len(request.reports))


def test_categorical_response(metric):
    p, q, _ = categorical.support_channel(design_pb2.K_RR, 2, EPS)
    return report_service_pb2.GetDesignResponse(
        metric=metric, time_precision_seconds=3600, reporting_period_seconds=DAY,
        categories=["Y", "N"],
        design=design_pb2.Design(
            version=1, a=p, b=q, epsilon=EPS, categories=2,
            parameters=design_pb2.DesignParameters(categorical=design_pb2.Categorical(
                mechanism=design_pb2.K_RR, epsilon=EPS))))


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


class ReportStringTest(unittest.TestCase):
    def setUp(self):
        self.collector = FakeCollector()

    def test_sends_one_sketch_bit_for_the_devices_group(self):
        r = make_reporter(self.collector, seed=5)
        self.assertTrue(r.report_string("app", "héllo"))
        r.flush(5)
        (sent,) = self.collector.received
        self.assertTrue(sent.HasField("heavy_hitters"))
        self.assertFalse(sent.HasField("categorical") or sent.HasField("numeric"))
        self.assertEqual(sent.design_fingerprint, 0x55)
        hh = sent.heavy_hitters
        self.assertTrue(0 <= hh.group <= 9 and 0 <= hh.row < 4 and 0 <= hh.coefficient < 64)
        self.assertIn(sent.bit, (0, 1))

    def test_str_and_its_utf8_bytes_are_one_value(self):
        clock = Clock()
        r = make_reporter(self.collector, seed=7, clock=clock)
        r.report_string("app", "日本")
        clock.t += DAY
        r.report_string("app", "日本".encode("utf-8"))
        r.flush(5)
        a, b = self.collector.received
        self.assertEqual((a.heavy_hitters, a.bit), (b.heavy_hitters, b.bit))
        self.assertEqual(r.ledger()["app"].randomizations, 1)

    def test_group_drawn_once_with_secrets_and_kept_memo_keyed_by_hmac(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "device.db")
            clock = Clock()
            with mock.patch("deniable.reporter.secrets.randbelow",
                            wraps=deniable.reporter.secrets.randbelow) as randbelow:
                r = make_reporter(self.collector, store_path=path, clock=clock)
                r.report_string("app", "chrome")
                self.assertTrue(randbelow.called)  # the secure generator drew
            clock.t += DAY
            r.report_string("app", "firefox")
            r.close()
            with sqlite3.connect(path) as db:
                groups = db.execute("SELECT metric, version, grp FROM hh_group").fetchall()
                keys = db.execute("SELECT value_key, report FROM hh_memo").fetchall()
                dump = "\n".join(db.iterdump())
            self.assertEqual(len(groups), 1)
            (metric, version, group), = groups
            self.assertEqual((metric, version), ("app", 1))
            self.assertEqual(len(keys), 2)
            self.assertTrue(all(len(k) == 32 for k, _ in keys))
            # The device file never holds a value in clear.
            for value in ("chrome", "firefox"):
                self.assertNotIn(value, dump)
                self.assertNotIn(value.encode().hex(), dump.lower())
            # A new reporter on the file keeps the group and the memo, whatever it would draw.
            clock.t += DAY
            r = make_reporter(self.collector, store_path=path, seed=99, clock=clock)
            r.report_string("app", "chrome")
            self.assertEqual(r.ledger()["app"].randomizations, 2)
            r.flush(5)
            r.close()
            first, second, third = self.collector.received
            self.assertEqual((first.heavy_hitters, first.bit), (third.heavy_hitters, third.bit))
            self.assertEqual({x.heavy_hitters.group for x in self.collector.received}, {group})

    def test_memo_per_value_and_ledger_per_distinct_value_with_the_cap(self):
        clock = Clock()
        r = make_reporter(self.collector, seed=11, clock=clock,
                          max_epsilon_per_metric=2.5 * EPS)
        for day, value in enumerate(("a", "b", "a", "b")):
            clock.t = T0 + day * DAY
            self.assertTrue(r.report_string("app", value))
        ledger = r.ledger()["app"]
        self.assertEqual((ledger.randomizations, ledger.reports_accepted), (2, 4))
        self.assertAlmostEqual(ledger.epsilon_spent, 2 * EPS)
        clock.t = T0 + 4 * DAY
        with self.assertRaises(deniable.DeniableError) as e:
            r.report_string("app", "c")
        self.assertEqual(e.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
        again = r.report_string("app", "b")
        self.assertTrue(again)
        self.assertEqual(r.report_string("app", "a").outcome,
                         deniable.ReportOutcome.ALREADY_REPORTED)

    def test_every_groups_reports_are_a_fair_share_over_devices(self):
        # 2000 devices (seeded): the group is 0 a quarter of the time (500, sd 19), else uniform
        # over 1 .. 9 (167 each, sd 12).
        groups = [0] * 10
        for seed in range(2000):
            r = make_reporter(FakeCollector(), seed=seed)
            r.report_string("app", "x")
            groups[r._store.hh_group("app", 1, lambda: -1)] += 1
            r.close()
        self.assertTrue(420 < groups[0] < 580, groups)
        for g in groups[1:]:
            self.assertTrue(120 < g < 215, groups)

    def test_wrong_kind_and_bad_values_are_refused_and_queue_nothing(self):
        r = make_reporter(self.collector, seed=4)
        for metric, kind in (("yesno", "is a yes/no metric"), ("vote", "has categories (Y, N)"),
                             ("mean", "is a numeric metric")):
            with self.assertRaises(deniable.DeniableError) as e:
                r.report_string(metric, "x")
            self.assertEqual(e.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
            self.assertTrue(e.exception.message.startswith(
                f"metric: \"{metric}\" is not a heavy-hitters metric (it {kind}"),
                e.exception.message)
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("app", "chrome")
        self.assertEqual(e.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("report_string", e.exception.message)
        self.assertNotIn("chrome", e.exception.message)
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("app", True)
        self.assertIn("heavy-hitters metric", e.exception.message)
        with self.assertRaises(deniable.DeniableError) as e:
            r.report_value("app", 3.0)
        self.assertIn("report_string", e.exception.message)
        for bad, words in (("toolongvalue", "value: has 12 bytes; the metric allows at most 8"),
                           ("a\0b", "value: has a NUL byte at offset 1"),
                           (42, "value: must be bytes or str"),
                           (None, "value: must be bytes or str"),
                           ("\ud800", "value: is not valid Unicode")):
            with self.assertRaises(deniable.DeniableError) as e:
                r.report_string("app", bad)
            self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertTrue(e.exception.message.startswith(words), e.exception.message)
            self.assertNotIn("toolong", e.exception.message)
        self.assertEqual(r.pending(), 0)
        self.assertEqual(r.ledger(), {})

    def test_true_values_are_never_logged(self):
        lines = []
        r = make_reporter(self.collector, seed=8, log=lambda level, m: lines.append(m))
        r.report_string("app", "secret1")
        r.report_string("app", "secret2")  # already reported this period: logged
        r.flush(5)
        self.assertTrue(lines)
        self.assertFalse(any("secret" in line for line in lines), lines)

    def test_design_mismatch_forgets_the_memo_keeps_the_group(self):
        r = make_reporter(self.collector, seed=6)
        r.report_string("app", "v")
        key = r._store.value_key(b"v")
        self.assertIsNotNone(r._store.lookup_hh_memo("app", 1, key))
        group = r._store.hh_group("app", 1, lambda: -1)
        r._store.forget_design("app", 1)
        self.assertIsNone(r._store.lookup_hh_memo("app", 1, key))
        self.assertEqual(r._store.hh_group("app", 1, lambda: -1), group)


class QueryClientTopValuesTest(unittest.TestCase):
    """top_values / frequencies against a scripted channel: the requests as sent and every
    field of the answer."""

    class Channel:
        def __init__(self, answer):
            self.requests = []
            self.answer = answer

        def unary_unary(self, path, request_serializer, response_deserializer):
            def call(request, timeout=None, wait_for_ready=None):
                self.requests.append((path, request))
                return self.answer
            return call

        def close(self):
            pass

    def answer(self):
        return query_service_pb2.TopValues(
            metric="app", design_version=2, devices=1000, estimation_reports=250,
            confidence_level=0.95, per_value_level=0.99, tested=5, detection_threshold=0.04,
            prefixes_per_level=[3, 2], epsilon=EPS, reports_of_older_versions=7,
            values=[query_service_pb2.ValueShare(
                value="日本".encode(), share=0.3, count=300, standard_error=0.02,
                collision_sd=0.001, lower=0.26, upper=0.34, simultaneous_lower=0.25,
                simultaneous_upper=0.35, above_threshold=True, reports=250),
                query_service_pb2.ValueShare(value=b"\xff", share=-0.01)])

    def test_top_values_and_frequencies(self):
        channel = self.Channel(self.answer())
        q = deniable.QueryClient(channel=channel, now=lambda: T0)
        top = q.top_values("app", start="-7d", level=0.9, max_prefixes=16)
        path, request = channel.requests[-1]
        self.assertTrue(path.endswith("/GetTopValues"), path)
        self.assertEqual((request.metric, request.start_time_seconds, request.confidence_level,
                          request.max_prefixes), ("app", T0 - 7 * DAY, 0.9, 16))
        self.assertEqual((top.devices, top.estimation_reports, top.tested, top.design_version,
                          top.prefixes_per_level, top.reports_of_older_versions),
                         (1000, 250, 5, 2, [3, 2], 7))
        first, second = top.values
        self.assertEqual((first.value, first.text, first.share, first.lower, first.upper,
                          first.above_threshold, first.reports),
                         ("日本".encode(), "日本", 0.3, 0.26, 0.34, True, 250))
        self.assertIsNone(second.text)  # not UTF-8
        f = q.frequencies("app", ["日本", b"\x01"], estimation_group_only=True)
        path, request = channel.requests[-1]
        self.assertTrue(path.endswith("/GetFrequencies"), path)
        self.assertEqual(list(request.values), ["日本".encode(), b"\x01"])
        self.assertTrue(request.estimation_group_only)
        self.assertIsInstance(f, deniable.TopValues)
        for bad, words in (("one", "values: must be a list"), ([1], "values[0]: must be bytes"),
                           (["\ud800"], "values[0]: is not valid Unicode")):
            with self.assertRaises(DeniableError) as e:
                q.frequencies("app", bad)
            self.assertTrue(str(e.exception).find(words) >= 0, e.exception)

    def test_create_metric_takes_a_heavy_hitters_design(self):
        p = query.design_parameters(heavy_hitters=1.5, max_length=16, width=256)
        self.assertEqual((p.heavy_hitters.epsilon, p.heavy_hitters.max_length,
                          p.heavy_hitters.width, p.heavy_hitters.rows), (1.5, 16, 256, 0))
        with self.assertRaises(DeniableError) as e:
            query.design_parameters(symmetric_epsilon=1.0, max_length=16)
        self.assertIn("max_length", str(e.exception))
        with self.assertRaises(DeniableError):
            query.design_parameters(heavy_hitters=1.0, mechanism="K_RR")
