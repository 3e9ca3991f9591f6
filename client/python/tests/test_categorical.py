"""Unit tests of the Python SDK's categorical reports (issue 14): the randomizers' channels by
exact enumeration (and OLH's q* over seeded draws against an exact binomial bound), the wire
form, memo and ledger per category, the cap, errors, the design check and the device file's
migration. Run with the installed package (CTest python_sdk_unit)."""
import math
import os
import secrets
import sqlite3
import tempfile
import unittest
from unittest import mock

import grpc

import deniable
from deniable import categorical
from deniable.store import DeviceStore
from deniable.v1 import design_pb2, report_service_pb2

T0 = 1795435200  # 2026-11-23 12:00 UTC
NAMES = ["Y", "N", "U", "A", "X"]
P = categorical.LOCAL_HASH_PRIME


def served_design(mechanism, k, epsilon, version=1):
    p, q, g = categorical.support_channel(mechanism, k, epsilon)
    return design_pb2.Design(
        parameters=design_pb2.DesignParameters(
            categorical=design_pb2.Categorical(mechanism=mechanism, epsilon=epsilon)),
        version=version, a=p, b=q, epsilon=epsilon, categories=k, hash_buckets=g)


class FakeCollector:
    """GetDesign answers one categorical design (or a yes/no one for metric "yesno");
    SubmitReports accepts everything and keeps the reports."""

    def __init__(self, mechanism=design_pb2.K_RR, names=NAMES[:4], epsilon=math.log(3),
                 randomization=design_pb2.MEMOIZED, design=None):
        self.names, self.randomization = list(names), randomization
        self.design = design or served_design(mechanism, len(names), epsilon)
        self.received = []

    def unary_unary(self, path, request_serializer, response_deserializer):
        return self._design if path.endswith("GetDesign") else self._submit

    def close(self):
        pass

    def _design(self, request, timeout=None, wait_for_ready=None):
        if request.metric == "yesno":
            return report_service_pb2.GetDesignResponse(
                metric="yesno", time_precision_seconds=3600, reporting_period_seconds=86400,
                design=design_pb2.Design(version=1, a=0.75, b=0.25, epsilon=math.log(3)))
        return report_service_pb2.GetDesignResponse(
            metric=request.metric, time_precision_seconds=3600, reporting_period_seconds=86400,
            randomization=self.randomization, design=self.design, categories=self.names,
            design_fingerprint=0x42)

    def _submit(self, request, timeout=None, wait_for_ready=None):
        self.received.extend(request.reports)
        return report_service_pb2.SubmitReportsResponse(accepted=len(request.reports))


def reporter(collector, **options):
    defaults = dict(channel=collector, background_sending=False, clock=lambda: T0,
                    shutdown_drain_timeout=0)
    defaults.update(options)
    return deniable.Reporter(**defaults)


class PathRng:
    """Follows one path through the randomizer's draws and records the path's probability:
    bernoulli(p) is branch 0 (True, probability p) or 1 (False, 1 - p); randbelow(n) for n up to
    `limit` is branch i with probability 1/n; a larger n (OLH's hash draws) answers the next of
    `fixed` and records n."""

    def __init__(self, path, fixed=(), limit=1000):
        self.path, self.taken, self.prob = path, [], 1.0
        self.fixed, self.large, self.limit = list(fixed), [], limit

    def _choose(self, n):
        i = len(self.taken)
        choice = self.path[i] if i < len(self.path) else 0
        self.taken.append((choice, n))
        return choice

    def bernoulli(self, p):
        yes = self._choose(2) == 0
        self.prob *= p if yes else 1.0 - p
        return yes

    def randbelow(self, n):
        if n > self.limit:
            self.large.append(n)
            return self.fixed.pop(0)
        choice = self._choose(n)
        self.prob /= n
        return choice


def enumerate_outcomes(draw, fixed=()):
    """{outcome: exact probability} of draw(rng) over every path of PathRng."""
    outcomes, path = {}, []
    while True:
        rng = PathRng(path, fixed)
        outcome = draw(rng)
        outcomes[outcome] = outcomes.get(outcome, 0.0) + rng.prob
        taken = rng.taken
        while taken and taken[-1][0] == taken[-1][1] - 1:
            taken.pop()
        if not taken:
            return outcomes, rng
        path = [c for c, _ in taken[:-1]] + [taken[-1][0] + 1]


def binomial_bounds(n, p, tail):
    """The smallest lo and largest hi with P(X < lo) <= tail and P(X > hi) <= tail for
    X ~ Binomial(n, p), by summing the exact pmf (log-gamma) from each end."""
    def pmf(x):
        return math.exp(math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1)
                        + x * math.log(p) + (n - x) * math.log1p(-p))
    lo, below = 0, 0.0
    while below + pmf(lo) <= tail:
        below += pmf(lo)
        lo += 1
    hi, above = n, 0.0
    while above + pmf(hi) <= tail:
        above += pmf(hi)
        hi -= 1
    return lo, hi


class ChannelTest(unittest.TestCase):
    """The randomizers' channels equal the designs', computed exactly."""

    def test_k_rr_channel_is_p_on_the_diagonal_and_q_elsewhere(self):
        for k, eps in ((2, 0.5), (4, math.log(3)), (7, 2.0)):
            d = categorical.design_from_wire(served_design(design_pb2.K_RR, k, eps),
                                             [str(i) for i in range(k)])
            self.assertAlmostEqual(d.p_star + (k - 1) * d.q_star, 1.0, places=15)
            for x in range(k):
                dist, _ = enumerate_outcomes(
                    lambda rng: categorical.randomize(d, x, rng).category)
                self.assertEqual(set(dist), set(range(k)))
                for y, prob in dist.items():
                    self.assertAlmostEqual(prob, d.p_star if y == x else d.q_star, delta=1e-15,
                                           msg=(k, x, y))
                # the privacy ratio of the design: e^eps exactly
                self.assertAlmostEqual(math.log(d.p_star / d.q_star), eps, delta=1e-12)

    def test_oue_channel_is_the_product_of_independent_bits(self):
        k, eps = 5, 1.2
        d = categorical.design_from_wire(served_design(design_pb2.OUE, k, eps),
                                         NAMES[:k])
        self.assertEqual((d.p_star, d.q_star), (0.5, 1 / (math.exp(eps) + 1)))
        for x in range(k):
            dist, _ = enumerate_outcomes(
                lambda rng: categorical.randomize(d, x, rng).bits)
            self.assertEqual(len(dist), 2 ** k)
            for packed, prob in dist.items():
                bits = categorical.unpack_bits(packed, k)
                want = 1.0
                for v, bit in enumerate(bits):
                    p = d.p_star if v == x else d.q_star
                    want *= p if bit else 1 - p
                self.assertAlmostEqual(prob, want, delta=1e-15)
            # P(report supports v | x): p* for v = x, q* otherwise (the design's channel).
            for v in range(k):
                support = sum(prob for packed, prob in dist.items()
                              if categorical.unpack_bits(packed, k)[v])
                self.assertAlmostEqual(support, d.p_star if v == x else d.q_star, delta=1e-15)

    def test_olh_given_its_hash_reports_the_true_bucket_with_p_star(self):
        k, eps = 6, 1.5
        d = categorical.design_from_wire(served_design(design_pb2.OLH, k, eps), NAMES + ["Z"])
        self.assertEqual(d.g, 5)  # round(e^1.5 + 1) = round(5.48)
        for a_minus_1, b in ((0, 0), (12344, 678), (P - 2, P - 1), (2 ** 30, 99)):
            for x in range(k):
                dist, rng = enumerate_outcomes(
                    lambda r: (lambda rep: (rep.hash_a, rep.hash_b, rep.bucket))(
                        categorical.randomize(d, x, r)), fixed=[a_minus_1, b] * 64)
                self.assertEqual(rng.large, [P - 1, P])  # a in [1, P - 1], b in [0, P - 1]
                h = ((a_minus_1 + 1) * x + b) % P % d.g
                self.assertEqual(set(dist), {(a_minus_1 + 1, b, z) for z in range(d.g)})
                for (_, _, z), prob in dist.items():
                    want = d.p_star if z == h else (1 - d.p_star) / (d.g - 1)
                    self.assertAlmostEqual(prob, want, delta=1e-15)

    def test_olh_supports_another_category_with_q_star_over_seeded_draws(self):
        # Seeded draws (reproducible); the count must lie within the exact binomial bounds of
        # tail 1e-9 on each side for q* (what the design claims) and must not for the naive
        # (1 - p*) / (g - 1), which forgets hash collisions: c = 1/5 here.
        k, eps, n = 3, 1.5, 40000
        d = categorical.design_from_wire(served_design(design_pb2.OLH, k, eps), NAMES[:k])
        rng = deniable.reporter._SeededRandom(14)
        own = other = 0
        for _ in range(n):
            report = categorical.randomize(d, 0, rng)
            own += categorical.supports(d, report, 0)
            other += categorical.supports(d, report, 1)
        lo, hi = binomial_bounds(n, d.q_star, 1e-9)
        self.assertTrue(lo <= other <= hi, (lo, other, hi, d.q_star))
        lo, hi = binomial_bounds(n, d.p_star, 1e-9)
        self.assertTrue(lo <= own <= hi, (lo, own, hi, d.p_star))
        naive = (1 - d.p_star) / (d.g - 1)
        lo, hi = binomial_bounds(n, naive, 1e-9)
        self.assertFalse(lo <= other <= hi, (lo, other, hi, naive))

    def test_the_recomputed_channel_matches_the_cpp_formulas(self):
        # Values the C++ CategoricalDesign gives (common/src/categorical.cc), written out:
        # k-RR k = 4 at ln 3: p = 3/6, q = 1/6; OUE at ln 3: q = 1/4; OLH at ln 3: g = 4.
        p, q, g = categorical.support_channel(design_pb2.K_RR, 4, math.log(3))
        self.assertAlmostEqual(p, 0.5, delta=1e-15)
        self.assertAlmostEqual(q, 1 / 6, delta=1e-15)
        self.assertEqual(categorical.support_channel(design_pb2.OUE, 9, math.log(3))[1:],
                         (0.25, 0))
        p, q, g = categorical.support_channel(design_pb2.OLH, 9, math.log(3))
        self.assertEqual(g, 4)
        self.assertAlmostEqual(p, 0.5, delta=1e-15)
        # c = 1/g up to 1e-9, so q* is within 1e-9 of p/g + (1 - 1/g)(1 - p)/(g - 1) = 1/4.
        self.assertAlmostEqual(q, 0.25, delta=1e-9)
        self.assertNotEqual(q, 0.25)

    def test_pack_bits_is_lsb_first_with_zero_high_bits(self):
        self.assertEqual(categorical.pack_bits([1, 0, 1, 0, 0, 0, 0, 0, 0, 1]), b"\x05\x02")
        self.assertEqual(categorical.unpack_bits(b"\x05\x02", 10),
                         [1, 0, 1, 0, 0, 0, 0, 0, 0, 1])


class CategoricalReporterTest(unittest.TestCase):
    def test_each_mechanism_sends_its_wire_form(self):
        for mechanism, k in ((design_pb2.K_RR, 4), (design_pb2.OUE, 10), (design_pb2.OLH, 5)):
            c = FakeCollector(mechanism=mechanism, names=[f"c{i}" for i in range(k)],
                              epsilon=1.5)
            r = reporter(c)
            rid = r.report("vote", "c3").report_id
            self.assertEqual(len(rid), 16)
            r.flush(5)
            (sent,) = c.received
            self.assertEqual((sent.bit, sent.design_version, sent.design_fingerprint),
                             (0, 1, 0x42))
            self.assertTrue(sent.HasField("categorical"))
            cat = sent.categorical
            if mechanism == design_pb2.K_RR:
                self.assertTrue(0 <= cat.category < k)
                self.assertEqual((cat.bits, cat.hash_a, cat.bucket), (b"", 0, 0))
            elif mechanism == design_pb2.OUE:
                self.assertEqual(len(cat.bits), 2)
                self.assertEqual(cat.bits[1] >> 2, 0)  # bits 10..15 unused
                self.assertEqual((cat.category, cat.hash_a), (0, 0))
            else:
                self.assertTrue(1 <= cat.hash_a <= P - 1 and 0 <= cat.hash_b <= P - 1)
                self.assertTrue(0 <= cat.bucket < 5)
            self.assertEqual(r.categories("vote"), [f"c{i}" for i in range(k)])
            r.close()

    def test_randomness_comes_from_secrets(self):
        c = FakeCollector(mechanism=design_pb2.OLH, epsilon=1.5)
        with mock.patch.object(secrets, "randbelow", wraps=secrets.randbelow) as draws:
            reporter(c).report("vote", "U")
        # a, b, the bucket's coin and possibly another bucket
        self.assertIn(draws.call_count, (3, 4))

    def test_memo_per_category_and_ledger_per_distinct_category(self):
        now = [T0]
        c = FakeCollector(mechanism=design_pb2.OUE, epsilon=1.0)
        r = reporter(c, clock=lambda: now[0])
        for day, answer in enumerate(["Y", "N", "Y", "Y", "N"]):
            now[0] = T0 + day * 86400
            self.assertTrue(r.report("vote", answer))
            self.assertIs(r.report("vote", "U").outcome, deniable.ReportOutcome.ALREADY_REPORTED)  # the period's report is queued already
        r.flush(5)
        sent = [x.categorical.bits for x in c.received]
        self.assertEqual(len(sent), 5)
        self.assertEqual(sent[0], sent[2])
        self.assertEqual(sent[0], sent[3])
        self.assertEqual(sent[1], sent[4])
        self.assertEqual(len({x.report_id for x in c.received}), 5)
        ledger = r.ledger()["vote"]
        self.assertEqual((ledger.reports_accepted, ledger.randomizations,
                          ledger.reports_repeated_in_period), (5, 2, 5))
        self.assertAlmostEqual(ledger.epsilon_spent, 2.0)
        self.assertAlmostEqual(ledger.epsilon_if_fresh, 5.0)

    def test_the_cap_refuses_a_new_category_but_not_a_memoized_one(self):
        c = FakeCollector(epsilon=1.0)
        r = reporter(c, one_report_per_period=False, max_epsilon_per_metric=1.5)
        r.report("vote", "Y")
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("vote", "N")
        self.assertEqual(e.exception.code, grpc.StatusCode.RESOURCE_EXHAUSTED)
        r.report("vote", "Y")
        self.assertEqual(r.pending(), 2)
        self.assertAlmostEqual(r.ledger()["vote"].epsilon_spent, 1.0)

    def test_errors_queue_nothing_and_never_repeat_the_answer(self):
        c = FakeCollector()
        r = reporter(c)
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("vote", "Maybe")
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("category: not one of the categories", e.exception.message)
        self.assertIn("Y, N, U, A", e.exception.message)
        self.assertNotIn("Maybe", str(e.exception))
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("vote", True)
        self.assertEqual(e.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("yesno", "Y")
        self.assertEqual(e.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(r.pending(), 0)
        self.assertEqual(r.ledger(), {})

    def test_a_design_whose_channel_does_not_match_is_refused(self):
        design = served_design(design_pb2.K_RR, 4, math.log(3))
        design.a = 0.6
        r = reporter(FakeCollector(design=design))
        with self.assertRaises(deniable.DeniableError) as e:
            r.report("vote", "Y")
        self.assertEqual(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("does not match", e.exception.message)
        design = served_design(design_pb2.OLH, 4, math.log(3))
        design.hash_buckets = 7
        with self.assertRaises(deniable.DeniableError) as e:
            reporter(FakeCollector(design=design)).report("vote", "Y")
        self.assertIn("design.hash_buckets", e.exception.message)
        self.assertEqual(r.pending(), 0)

    def test_the_memo_survives_a_restart_with_the_device_file(self):
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "device.db")
            now = [T0]
            c = FakeCollector(mechanism=design_pb2.OLH, epsilon=1.5)
            r = reporter(c, store_path=path, clock=lambda: now[0])
            r.report("vote", "U")
            r.flush(5)
            r.close()
            now[0] += 86400
            r = reporter(c, store_path=path, clock=lambda: now[0])
            r.report("vote", "U")
            r.flush(5)
            r.close()
            first, second = c.received
            self.assertEqual(first.categorical, second.categorical)
            self.assertNotEqual(first.report_id, second.report_id)

    def test_forgetting_a_design_forgets_its_category_memo(self):
        store = DeviceStore(None)
        report = report_service_pb2.CategoricalReport(category=2).SerializeToString()
        store.commit_report("vote", b"r", memo=("category", 1, 0, report), randomized=True,
                            epsilon=1.0, period_start=0, max_queued=10)
        self.assertEqual(store.lookup_category_memo("vote", 1, 0), report)
        store.forget_design("vote", 1)
        self.assertIsNone(store.lookup_category_memo("vote", 1, 0))

    def test_a_device_file_of_format_one_migrates_and_keeps_its_state(self):
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "old.db")
            old = sqlite3.connect(path)
            old.executescript("""
              CREATE TABLE deniable_py_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
              INSERT INTO deniable_py_meta VALUES ('format', '1');
              CREATE TABLE memo (metric TEXT NOT NULL, version INTEGER NOT NULL,
                value INTEGER NOT NULL, bit INTEGER NOT NULL, PRIMARY KEY (metric, version, value));
              INSERT INTO memo VALUES ('m', 1, 1, 0);
              CREATE TABLE queue (sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                metric TEXT NOT NULL, report BLOB NOT NULL);
              INSERT INTO queue(metric, report) VALUES ('m', x'0a016d');
            """)
            old.commit()
            old.close()
            store = DeviceStore(path)
            self.assertEqual(store.lookup_memo("m", 1, True), 0)
            self.assertEqual(store.queue_size(), 1)
            self.assertIsNone(store.lookup_category_memo("m", 1, 0))
            self.assertIsNone(store.lookup_numeric_memo("m", 1, 0))  # format 4's tables
            self.assertIsNone(store.lookup_hh_memo("m", 1, store.value_key(b"v")))  # format 5's
            self.assertEqual(store.ledger().get("m", {}).get("last_report_seconds", 0), 0)
            store.close()
            db = sqlite3.connect(path)
            self.assertEqual(db.execute("SELECT value FROM deniable_py_meta WHERE key ="
                                        " 'format'").fetchone(), ("5",))
            db.close()


if __name__ == "__main__":
    unittest.main()
