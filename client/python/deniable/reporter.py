"""Reporter: answer yes/no metrics on the device, send only randomized bits.

Same contract as the C++ Reporter (client/include/deniable/client/reporter.h, docs/sdk.md):

* report() randomizes the true answer with the metric's design (statistics.md section 1: r = 1
  with probability a for a true "yes", b for a "no"), using `secrets` (the OS CSPRNG), and
  commits the randomized report to the device file before it returns. The true answer is the
  memo key and the randomizer's input only; it is never queued, logged or sent.
* MEMOIZED metrics (the default): one draw per (metric, design version, true value), stored and
  re-sent. FRESH_PER_PERIOD: a new draw each period, only with max_epsilon_per_metric set.
* One report per metric per reporting period (periods aligned to the Unix epoch); later calls
  in the period queue nothing, return ReportResult(outcome=ReportOutcome.ALREADY_REPORTED)
  ("already reported this period; nothing sent": falsy, no report id) and count in
  MetricLedger.reports_repeated_in_period.
* Delivery: a background thread sends the queue oldest first. A report leaves the device file
  only when acknowledged (stored or duplicate), rejected for good (a rejection with
  permanent=True, or a batch of one rejected whole with INVALID_ARGUMENT), or dropped by a
  device bound (queue full, older than max_report_age).
* Design fingerprint (docs/sdk.md): every report carries the design_fingerprint of the
  GetDesign answer it was randomized with. A per-report FAILED_PRECONDITION rejection means the
  collector has another design under that version (another server, a recreated database): the
  report is dropped (counted in dropped_design_mismatch, never randomized again: that would
  spend its privacy twice), the metric's cached design and the memoized bits of that version
  are forgotten, and the design is fetched again. A batch of more than one rejected whole
  with INVALID_ARGUMENT is halved and re-sent. Every other status is retried with exponential
  backoff and full jitter, re-sending the same report ids (the server counts each id once).

* Metrics with categories (GetDesignResponse.categories; docs/sdk.md "Questions with
  categories"): report(metric, "U") takes the true category by name and sends one
  Report.categorical drawn with the metric's k-RR, OUE or OLH design (deniable.categorical, the
  C++ SDK's wire form). Memoized per (metric, design version, category); the ledger counts the
  design's epsilon once per distinct category reported. The design's (p*, q*, g) are recomputed
  from the mechanism, k and epsilon, and a design that does not match is refused.

* Heavy-hitters metrics (design kind heavy_hitters; docs/sdk.md "Strings in Python and JS"):
  report_string(metric, value) takes the true value as bytes or str (UTF-8) and sends one
  Report.heavy_hitters (deniable.heavy_hitters, the C++ SDK's wire form) for the device's group,
  drawn once per (metric, design version) with `secrets` and kept in the device file. Memoized
  per (metric, design version, value), the memo keyed by an HMAC of the value (the device file
  never holds the value); the ledger counts the design's epsilon once per distinct value.

Thread-safe: every method may be called from any thread. One Reporter per device file.
"""
import dataclasses
import datetime
import enum
import math
import numbers
import random
import secrets
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Union

import grpc

from deniable import _rpc, categorical, heavy_hitters, labels as _labels, numeric, randomizer
from deniable.errors import DeniableError, is_permanent_batch_error, rejection_code
from deniable.store import DeviceStore
from deniable.v1 import design_pb2, report_service_pb2

INVALID = grpc.StatusCode.INVALID_ARGUMENT


@dataclasses.dataclass
class MetricLedger:
    """Per metric: reports and privacy spent (epsilon in nats), as MetricLedger in C++."""
    reports_accepted: int = 0
    reports_acknowledged: int = 0
    randomizations: int = 0
    epsilon_spent: float = 0.0
    epsilon_if_fresh: float = 0.0
    period_start_seconds: int = 0
    reports_this_period: int = 0
    reports_repeated_in_period: int = 0
    last_report_seconds: int = 0  # event time of the last queued report (window flags)
    values_clipped: int = 0  # numeric metrics: queued reports whose value was clipped


class ReportOutcome(enum.Enum):
    """What report() did."""
    QUEUED = "queued"  # randomized (or memoized) and committed to the device file
    ALREADY_REPORTED = "already reported this period; nothing sent"


@dataclasses.dataclass(frozen=True)
class ReportResult:
    """report()'s answer. True (bool) when a report was queued; False for ALREADY_REPORTED
    (one report per metric per period: nothing queued, nothing spent, nothing sent)."""
    outcome: ReportOutcome
    metric: str
    report_id: Optional[bytes]  # 16 bytes when QUEUED, else None
    period_start_seconds: int   # the reporting period's start (Unix seconds)

    def __bool__(self) -> bool:
        return self.outcome is ReportOutcome.QUEUED

    def __str__(self) -> str:
        if self.outcome is ReportOutcome.QUEUED:
            return f"metric \"{self.metric}\": report queued (id {self.report_id.hex()})" \
                if self.report_id else f"metric \"{self.metric}\": report queued"
        return (f"metric \"{self.metric}\": already reported this period; nothing sent (the "
                f"period started at {self.period_start_seconds}; one report per metric per "
                "period)")


@dataclasses.dataclass
class DeliveryStats:
    queued: int = 0
    acknowledged: int = 0
    duplicates: int = 0
    dropped_rejected: int = 0
    dropped_queue_full: int = 0
    dropped_too_old: int = 0
    dropped_design_mismatch: int = 0
    send_attempts: int = 0      # since this Reporter was created
    failed_attempts: int = 0
    batch_splits: int = 0
    kept_after_rejection: int = 0
    values_clipped: int = 0     # report_value() values outside the metric's range, clipped


@dataclasses.dataclass(frozen=True)
class _Design:
    version: int
    a: float
    b: float
    epsilon: float
    precision: int
    period: int
    fresh: bool
    fingerprint: int = 0  # GetDesignResponse.design_fingerprint; 0 from older collectors
    categories: tuple = ()  # the metric's category names; empty for a yes/no metric
    categorical: object = None  # categorical.CategoricalDesign for a metric with categories
    window_firsts: bool = True  # send Report.window_firsts (GetDesignResponse.window_firsts_off)
    once: bool = False  # one report of the metric ever (GetDesignResponse.reporting_once)
    numeric_design: Optional[numeric.NumericDesign] = None  # a numeric metric (with a range)
    hh_design: Optional[heavy_hitters.HeavyHittersDesign] = None  # a heavy-hitters metric


def window_firsts(previous, now):
    """(day, week, month): whether a report at `now` (Unix seconds) is the device's first of its
    metric in its UTC day, ISO week (from Monday) and calendar month, when its previous report was
    at `previous` (0: none). docs/statistics.md section 4.4; the C++ SDK's WindowFirsts."""
    if previous <= 0:
        return True, True, True
    a = datetime.datetime.fromtimestamp(previous, datetime.timezone.utc).date()
    b = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).date()
    return (a != b, a - datetime.timedelta(days=a.weekday()) != b - datetime.timedelta(
        days=b.weekday()), (a.year, a.month) != (b.year, b.month))


def epsilon_of(a, b):
    """Local DP epsilon (nats) of a channel: max |ln(a/b)|, |ln((1-a)/(1-b))| (design.cc)."""
    def abs_log_ratio(x, y):
        if x == y:
            return 0.0
        if x == 0 or y == 0:
            return math.inf
        return abs(math.log(x / y))
    return max(abs_log_ratio(a, b), abs_log_ratio(1 - a, 1 - b))


def parse_design(response):
    """_Design from a GetDesignResponse; DeniableError(INVALID_ARGUMENT) if unusable."""
    d = response.design
    categories = tuple(response.categories)
    cat = categorical.design_from_wire(d, categories) if categories else None
    num = numeric.design_from_wire(d, response.range if response.HasField("range") else None) \
        if d.parameters.WhichOneof("kind") == "numeric" or response.HasField("range") else None
    hh = heavy_hitters.design_from_wire(d) \
        if d.parameters.WhichOneof("kind") == "heavy_hitters" else None
    if d.version == 0 or (num is None and (not (0 <= d.a <= 1 and 0 <= d.b <= 1)
                                           or d.a == d.b)):
        raise DeniableError(INVALID, f"design: unusable a={d.a} b={d.b} version={d.version}")
    randomization = response.randomization
    if randomization not in (design_pb2.RANDOMIZATION_UNSPECIFIED, design_pb2.MEMOIZED,
                             design_pb2.FRESH_PER_PERIOD):
        raise DeniableError(INVALID, f"randomization: unknown value {randomization}")
    return _Design(version=d.version, a=d.a, b=d.b,
                   epsilon=cat.epsilon if cat else numeric.local_epsilon(num) if num
                   else hh.epsilon if hh else epsilon_of(d.a, d.b),
                   precision=response.time_precision_seconds or 3600,
                   period=response.reporting_period_seconds or 86400,
                   fresh=randomization == design_pb2.FRESH_PER_PERIOD,
                   fingerprint=response.design_fingerprint, categories=categories,
                   categorical=cat, window_firsts=not response.window_firsts_off,
                   once=response.reporting_once, numeric_design=num, hh_design=hh)


class _SecureRandom:
    """The production generator: the OS CSPRNG through `secrets`."""

    @staticmethod
    def bernoulli(p):
        return secrets.randbelow(1 << 53) < p * (1 << 53)

    @staticmethod
    def token(n):
        return secrets.token_bytes(n)

    @staticmethod
    def uniform(upper):
        return secrets.randbelow(1 << 53) / (1 << 53) * upper

    @staticmethod
    def randbelow(n):
        return secrets.randbelow(n)


class _SeededRandom:
    """Tests and simulations only (Reporter(..., seed=...)): reproducible, NOT secure."""

    def __init__(self, seed):
        self._r = random.Random(seed)

    def bernoulli(self, p):
        return self._r.random() < p

    def token(self, n):
        return self._r.randbytes(n)

    def uniform(self, upper):
        return self._r.random() * upper

    def randbelow(self, n):
        return self._r.randrange(n)


class Reporter:
    """See the module docstring. Arguments:

    target: "host:port" of the collector's gRPC port; or channel=grpc.Channel.
    store_path: the SQLite device file (created 0600); None: in memory (tests only).
    credentials / bearer_token / insecure: as _rpc.make_channel (TLS by default).
    labels: public, low-cardinality labels sent with every report (never identifying).
    max_epsilon_per_metric: nats over the device's life (0: no cap for MEMOIZED metrics, and
      FRESH_PER_PERIOD metrics are refused; math.inf: no cap).
    Durations are in seconds. log: callable(level, message), level "info"/"warning"/"error";
    messages never contain a true answer. seed: tests and simulations only.
    """

    def __init__(self, target: Optional[str] = None, store_path: Optional[str] = None, *,
                 channel: Optional[grpc.Channel] = None,
                 credentials: Optional[grpc.ChannelCredentials] = None,
                 bearer_token: Optional[str] = None, insecure: bool = False,
                 labels: Optional[Mapping[str, str]] = None,
                 max_epsilon_per_metric: float = 0.0, one_report_per_period: bool = True,
                 rpc_timeout: float = 10.0, max_batch_reports: int = 1000,
                 max_queued_reports: int = 100000, max_report_age: float = 30 * 86400.0,
                 background_sending: bool = True, send_interval: float = 0.2,
                 first_design_wait: float = 2.0, initial_backoff: float = 0.1,
                 max_backoff: float = 5.0, max_attempts: int = 5,
                 shutdown_drain_timeout: float = 2.0, sync_every_report: bool = True,
                 log: Optional[Callable[[str, str], None]] = None,
                 clock: Callable[[], float] = time.time, seed: Optional[int] = None) -> None:
        for name, value in (("max_batch_reports", max_batch_reports),
                            ("max_queued_reports", max_queued_reports),
                            ("rpc_timeout", rpc_timeout), ("send_interval", send_interval),
                            ("max_report_age", max_report_age), ("max_attempts", max_attempts)):
            if not value > 0:
                raise DeniableError(INVALID, f"{name}: must be > 0, but is {value}")
        if not max_epsilon_per_metric >= 0:
            raise DeniableError(INVALID, "max_epsilon_per_metric: must be >= 0, but is "
                                f"{max_epsilon_per_metric}")
        self._channel = channel or _rpc.make_channel(target, credentials, bearer_token, insecure)
        self._own_channel = channel is None
        where = _rpc.Endpoint(target, not insecure) \
            if channel is None and target else None
        self._get_design = _rpc.unary(self._channel, "ReportService", "GetDesign",
                                      report_service_pb2.GetDesignRequest,
                                      report_service_pb2.GetDesignResponse, where)
        self._submit = _rpc.unary(self._channel, "ReportService", "SubmitReports",
                                  report_service_pb2.SubmitReportsRequest,
                                  report_service_pb2.SubmitReportsResponse, where)
        self._store = DeviceStore(store_path, sync_every_report)
        self._labels = dict(labels or {})
        self._max_epsilon = float(max_epsilon_per_metric)
        self._one_per_period = one_report_per_period
        self._rpc_timeout = rpc_timeout
        self._max_batch = int(max_batch_reports)
        self._batch_limit = int(max_batch_reports)
        self._max_queued = int(max_queued_reports)
        self._max_age = max_report_age
        self._send_interval = send_interval
        self._first_design_wait = first_design_wait
        self._initial_backoff, self._max_backoff = initial_backoff, max_backoff
        self._max_attempts = max_attempts
        self._drain = shutdown_drain_timeout
        self._log_fn = log
        self._clock = clock
        self._rng: Union[_SecureRandom, _SeededRandom] = \
            _SecureRandom() if seed is None else _SeededRandom(seed)
        self._mu = threading.Lock()          # report(): lookup-randomize-commit; caches
        self._send_mu = threading.Lock()     # one batch in flight at a time
        self._designs: Dict[str, _Design] = {}
        self._stale: set = set()
        self._session = DeliveryStats()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._closed = False
        self._sender = None
        if background_sending:
            self._sender = threading.Thread(target=self._sender_loop, name="deniable-sender",
                                            daemon=True)
            self._sender.start()

    @classmethod
    def local(cls, store_path: Optional[str] = None, target: Optional[str] = None,
              **options: Any) -> "Reporter":
        """Development mode: a Reporter for a local plaintext deniable-server started without
        TLS (`deniable-server --db=dev.db`): Reporter(target, store_path, insecure=True,
        **options), target defaulting to $DENIABLE_TARGET, else 127.0.0.1:50051. Never for
        production: reports would cross the network unencrypted."""
        return cls(_rpc.local_target(target), store_path, insecure=True, **options)

    # ---- public API ----
    def report(self, metric: str, answer: Union[bool, str], *,
               labels: Optional[Mapping[str, str]] = None) -> ReportResult:
        """Randomizes `answer` and queues the randomized report durably. `answer` is a bool for
        a yes/no metric, or the true category's name (str, case sensitive) for a metric with
        categories. `labels`: public labels for this report only, added to the reporter's (a
        key in both takes the value given here; docs/sdk.md "Per-report options"). Returns a
        ReportResult: outcome QUEUED with the 16-byte report_id, or
        ALREADY_REPORTED ("already reported this period; nothing sent"; falsy) when this
        period's report is queued or sent already (nothing is queued). Raises DeniableError (nothing queued, nothing spent):
        INVALID_ARGUMENT for a bad metric name, and "category: not one of the categories ..."
        for an unknown category (the message lists the metric's categories and never repeats
        the value passed); FAILED_PRECONDITION for a category on a yes/no metric or a bool on
        a metric with categories; the design fetch's code for an unknown metric (NOT_FOUND,
        UNAVAILABLE, ...); FAILED_PRECONDITION for FRESH_PER_PERIOD without
        max_epsilon_per_metric; RESOURCE_EXHAUSTED when a draw would exceed it;
        INVALID_ARGUMENT "labels..." when the merged labels break the collector's rules
        (deniable.labels)."""
        if not isinstance(metric, str) or not metric:
            raise DeniableError(INVALID, "metric: must be a non-empty string")
        merged = _labels.merged(self._labels, labels)
        design = self._design_for(metric, self._first_design_wait)
        value = self._true_value(metric, design, answer)
        if design.categorical is not None:
            return self._queue_category(metric, design, value, merged)
        return self._queue(metric, design, "bit", value,
                           lambda: randomizer.randomize_answer(design.a, design.b, value,
                                                               self._rng), labels=merged)

    def report_category_index(self, metric: str, index: int, *,
                              labels: Optional[Mapping[str, str]] = None) -> ReportResult:
        """report(metric, category) with the true category given by its index in the metric's
        order (categories(metric)), 0 <= index < k: the same report as by name. Raises
        DeniableError (nothing queued, nothing spent): INVALID_ARGUMENT "category: index must
        be in [0, k) for metric ..." for an index outside the range (or not an int);
        otherwise as report() with a category name (FAILED_PRECONDITION for a yes/no metric,
        INVALID_ARGUMENT "metric: ..." for a numeric one)."""
        if not isinstance(metric, str) or not metric:
            raise DeniableError(INVALID, "metric: must be a non-empty string")
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise DeniableError(INVALID, "category: index must be an int")
        merged = _labels.merged(self._labels, labels)
        design = self._design_for(metric, self._first_design_wait)
        self._check_kind(metric, design, categorical_answer=True)
        if not 0 <= index < len(design.categories):
            raise DeniableError(INVALID, f"category: index must be in [0, "
                                         f"{len(design.categories)}) for metric \"{metric}\"")
        return self._queue_category(metric, design, int(index), merged)

    def _queue_category(self, metric, design, index, merged):
        return self._queue(metric, design, "category", index,
                           lambda: categorical.randomize(design.categorical, index, self._rng),
                           labels=merged)

    def report_value(self, metric: str, value: float, *,
                     labels: Optional[Mapping[str, str]] = None) -> ReportResult:
        """Randomizes the number `value` of a numeric metric (a metric with a range; docs/sdk.md
        "Numeric metrics") and queues the randomized report durably, as report(). The value is
        clipped to the metric's range [lo, hi] (counted in DeliveryStats.values_clipped), then
        rounded to a level (ONE_BIT_MEAN: alpha-point rounding to the design's grid with this
        device's alpha for the metric, drawn once with `secrets` and kept in the device file;
        D_BIT_FLIP: its bucket); the level is the memo key and the randomizer's input, and the
        value goes nowhere else. Sends Report.bit (ONE_BIT_MEAN) or Report.numeric (D_BIT_FLIP).
        Memoized per (metric, design version, level); the ledger counts the design's epsilon
        once per distinct level. Returns a ReportResult as report(). Raises DeniableError
        (nothing queued, nothing spent): INVALID_ARGUMENT "value: ..." for a value that is not a
        number or is NaN (the message never repeats it), and "metric: ..." for a metric that is
        not numeric (as the C++ SDK; report() on a numeric metric likewise); otherwise as
        report(). `labels`: as report()."""
        if not isinstance(metric, str) or not metric:
            raise DeniableError(INVALID, "metric: must be a non-empty string")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise DeniableError(INVALID, "value: must be a number (int or float)")
        if math.isnan(value):
            raise DeniableError(INVALID, "value: is NaN, not a number to report")
        merged = _labels.merged(self._labels, labels)
        design = self._design_for(metric, self._first_design_wait)
        nd = design.numeric_design
        if design.hh_design is not None:
            raise DeniableError(
                INVALID, f"metric: \"{metric}\" is not a numeric metric (it is a heavy-hitters "
                         "metric of string values: report its value with report_string(metric, "
                         "value))")
        if nd is None:
            kind = f"has categories ({', '.join(design.categories)}): report one of them by " \
                   "name" if design.categorical is not None else "is a yes/no metric: report " \
                   "True or False"
            raise DeniableError(INVALID, f"metric: \"{metric}\" is not a numeric metric (it {kind} "
                                         "with report())")
        x, clipped = numeric.clip(nd, float(value))
        alpha = self._store.numeric_alpha(metric, lambda: self._rng.uniform(1.0)) \
            if nd.mechanism == numeric.ONE_BIT_MEAN else 0.0
        level = numeric.level_of(nd, x, alpha)
        return self._queue(metric, design, "numeric", level,
                           lambda: numeric.randomize(nd, level, self._rng), clipped, merged)

    def report_string(self, metric: str, value: Union[bytes, str], *,
                      labels: Optional[Mapping[str, str]] = None) -> ReportResult:
        """Randomizes the string `value` of a heavy-hitters metric (docs/sdk.md "Strings in
        Python and JS") and queues the randomized report durably, as report(). `value`: bytes,
        or a str sent as its UTF-8 bytes; at most the design's max_length bytes, no NUL byte.
        The device's group (estimation, or a prefix level) is drawn once per (metric, design
        version) with `secrets` and kept in the device file; the report is one bit of the
        sketch (deniable.heavy_hitters) at a row and coefficient drawn here, sent as
        Report.heavy_hitters with Report.bit. Memoized per (metric, design version, value): the
        same value gets the same report; the memo is keyed by an HMAC of the value, which goes
        nowhere else (never stored, logged or sent). The ledger counts the design's epsilon once
        per distinct value. Returns a ReportResult as report(). Raises DeniableError (nothing
        queued, nothing spent): INVALID_ARGUMENT "value: ..." for a value that is not bytes or
        str, is longer than max_length bytes or holds a NUL byte (the message gives the length
        or offset, never the value); FAILED_PRECONDITION "metric: ... is a yes/no metric" (or
        "has categories", "is a numeric metric") for a metric of another kind; otherwise as
        report(). `labels`: as report()."""
        if not isinstance(metric, str) or not metric:
            raise DeniableError(INVALID, "metric: must be a non-empty string")
        data = heavy_hitters.value_bytes(value)
        merged = _labels.merged(self._labels, labels)
        design = self._design_for(metric, self._first_design_wait)
        hh = design.hh_design
        if hh is None:
            kind = "is a numeric metric: report its value with report_value(metric, number)" \
                if design.numeric_design is not None else \
                f"has categories ({', '.join(design.categories)}): report one of them by name " \
                "with report()" if design.categorical is not None else \
                "is a yes/no metric: report True or False with report()"
            raise DeniableError(grpc.StatusCode.FAILED_PRECONDITION,
                                f"metric: \"{metric}\" is not a heavy-hitters metric (it {kind})")
        heavy_hitters.validate_value(hh, data)
        group = self._store.hh_group(metric, design.version,
                                     lambda: heavy_hitters.draw_group(hh, self._rng))
        return self._queue(metric, design, "heavy_hitters", self._store.value_key(data),
                           lambda: heavy_hitters.randomize(hh, data, group, self._rng),
                           labels=merged)

    def _queue(self, metric, design, kind, key, draw, clipped=False, labels=None):
        """The common part of the report calls: one report per period, the memo of
        `kind` ("bit", "category", "numeric" or "heavy_hitters") under `key` (the true value,
        category index, level or the value's HMAC key), the cap, then the report committed with its memo entry and ledger line in one
        transaction. draw(): the randomized answer (a bit, a CategoricalReport, or a Report
        with only its answer set); called only when nothing is memoized. labels: the report's
        (checked) labels; None: the reporter's."""
        now = int(self._clock())
        period_start = now - now % design.period
        with self._mu:
            ledger = self._store.ledger().get(metric, {})
            if ((self._one_per_period and ledger.get("period_start_seconds") == period_start
                    and ledger.get("reports_this_period", 0) > 0)
                    or (design.once and ledger.get("reports_accepted", 0) > 0)):
                self._store.count_repeated(metric)
                self._log("info", f"metric \"{metric}\": already reported this period; "
                                  "nothing sent")
                return ReportResult(ReportOutcome.ALREADY_REPORTED, metric, None, period_start)
            memo: Any = None
            if not design.fresh:
                lookup = {"category": self._store.lookup_category_memo,
                          "numeric": self._store.lookup_numeric_memo,
                          "heavy_hitters": self._store.lookup_hh_memo}.get(
                              kind, self._store.lookup_memo)
                memo = lookup(metric, design.version, key)
            elif self._max_epsilon == 0:
                raise DeniableError(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    f"max_epsilon_per_metric: metric \"{metric}\" randomizes afresh each period "
                    "(FRESH_PER_PERIOD); set max_epsilon_per_metric to the most this device "
                    "may spend on it")
            if memo is None and self._max_epsilon > 0:
                spent = ledger.get("epsilon_spent", 0.0)
                if spent + design.epsilon > self._max_epsilon:
                    raise DeniableError(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"metric \"{metric}\": a new draw would spend {design.epsilon} nats on "
                        f"top of {spent}, above max_epsilon_per_metric = {self._max_epsilon}")
            # The only uses of the true value: the memo key and the randomizer.
            randomized = memo is None
            report_id = self._rng.token(16)
            report = report_service_pb2.Report(
                metric=metric, design_version=design.version, report_id=report_id,
                event_time_seconds=now - now % design.precision,
                labels=self._labels if labels is None else labels,
                design_fingerprint=design.fingerprint)
            if design.window_firsts:
                day, week, month = window_firsts(ledger.get("last_report_seconds", 0),
                                                 report.event_time_seconds)
                report.window_firsts.day, report.window_firsts.week = day, week
                report.window_firsts.month = month
            if kind == "category":
                drawn = draw() if randomized else \
                    report_service_pb2.CategoricalReport.FromString(memo)
                report.categorical.CopyFrom(drawn)
                memo_entry = ("category", design.version, key, drawn.SerializeToString())
            elif kind in ("numeric", "heavy_hitters"):
                answer = draw() if randomized else report_service_pb2.Report.FromString(memo)
                report.MergeFrom(answer)
                memo_entry = (kind, design.version, key, answer.SerializeToString())
            else:
                bit = draw() if randomized else int(memo)
                report.bit = bit
                memo_entry = ("bit", design.version, key, bit)
            evicted = self._store.commit_report(
                metric, report.SerializeToString(),
                memo=memo_entry if randomized and not design.fresh else None,
                randomized=randomized, epsilon=design.epsilon, period_start=period_start,
                max_queued=self._max_queued, report_time=report.event_time_seconds,
                clipped=clipped)
        if evicted:
            self._log("error", f"dropped {evicted} reports: queue full (max_queued_reports "
                               f"{self._max_queued}), oldest first")
        return ReportResult(ReportOutcome.QUEUED, metric, report_id, period_start)

    def categories(self, metric: str) -> List[str]:
        """The category names of `metric` in its order (empty for a yes/no metric), from its
        design (fetched if needed; errors as report())."""
        return list(self._design_for(metric, self._first_design_wait).categories)

    def prefetch(self, metrics: Iterable[str], timeout: float = 5.0) -> None:
        """Fetches and caches the designs; raises the first error after trying them all."""
        first = None
        for metric in metrics:
            try:
                self._fetch_design(metric, timeout)
            except DeniableError as e:
                first = first or e
        if first is not None:
            raise first

    def flush(self, timeout: Optional[float] = None) -> None:
        """Sends on this thread until the queue is empty. Raises DeniableError:
        DEADLINE_EXCEEDED at the timeout (seconds; None: none), the last failure's code once
        max_attempts - 1 transient failures in a row were tolerated, or, once the queue is
        empty, the first drop's code (the message says "dropped"). Unsent reports stay queued."""
        deadline = None if timeout is None else time.monotonic() + timeout
        first_drop = None
        failures = 0
        backoff = 0
        with self._send_mu:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise DeniableError(grpc.StatusCode.DEADLINE_EXCEEDED,
                                        f"flush: {self.pending()} reports still queued at the "
                                        "deadline")
                rpc_timeout = self._rpc_timeout if left is None else min(left, self._rpc_timeout)
                outcome, error = self._send_one_batch(rpc_timeout)
                if outcome == "empty":
                    self._refresh_stale()
                    if first_drop is not None:
                        raise first_drop
                    return
                if outcome in ("sent", "split", "permanent"):
                    failures, backoff = 0, 0
                    if outcome == "permanent" and first_drop is None:
                        first_drop = error
                    continue
                failures += 1
                if failures >= self._max_attempts:
                    raise error
                wait = self._next_backoff(backoff)
                backoff += 1
                if deadline is not None:
                    wait = min(wait, max(0.0, deadline - time.monotonic()))
                time.sleep(wait)

    def pending(self) -> int:
        """Reports queued and not yet acknowledged."""
        return self._store.queue_size()

    def ledger(self) -> Dict[str, MetricLedger]:
        """{metric: MetricLedger}: the privacy ledger (persisted in the device file)."""
        return {m: MetricLedger(**v) for m, v in self._store.ledger().items()}

    def stats(self) -> DeliveryStats:
        """DeliveryStats: queue length, persisted counters and this session's attempts."""
        with self._mu:
            session = dataclasses.replace(self._session)
        counters = self._store.counters()
        return dataclasses.replace(session, queued=self.pending(), **counters)

    def close(self) -> None:
        """Stops the sender, flushes for at most shutdown_drain_timeout; what is left stays
        in the device file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._wake.set()
        if self._sender is not None:
            self._sender.join()
        try:
            if self._drain > 0:
                self.flush(self._drain)
        except DeniableError as e:
            self._log("warning", f"close: {e}")
        self._store.close()
        if self._own_channel:
            self._channel.close()

    def __enter__(self) -> "Reporter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- internals ----
    @staticmethod
    def _check_kind(metric, design, categorical_answer):
        """Refuses a yes/no answer (categorical_answer False) or a category for a metric of
        another kind, as the C++ SDK does."""
        if design.hh_design is not None:
            raise DeniableError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"metric: \"{metric}\" is a heavy-hitters metric (string values): report its "
                "value with report_string(metric, value)")
        if design.numeric_design is not None:
            raise DeniableError(
                INVALID, f"metric: \"{metric}\" is a numeric metric: report its value with "
                         "report_value(metric, number)")
        if design.categorical is None and categorical_answer:
            raise DeniableError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"answer: metric \"{metric}\" is a yes/no metric without categories: "
                "report True or False")
        if design.categorical is not None and not categorical_answer:
            raise DeniableError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"answer: metric \"{metric}\" has categories ({', '.join(design.categories)}): "
                "report one of them by name, not a yes/no answer")

    @staticmethod
    def _true_value(metric, design, answer):
        """The memo key of a true answer: 0/1 for yes/no, the category's index otherwise.
        Messages never repeat the answer passed."""
        Reporter._check_kind(metric, design, isinstance(answer, str))
        if design.categorical is None:
            return int(bool(answer))
        try:
            return design.categories.index(answer)
        except ValueError:
            raise DeniableError(
                INVALID, f"category: not one of the categories of metric \"{metric}\" "
                         f"({', '.join(design.categories)}; names are case sensitive)") from None

    def _log(self, level, message):
        if self._log_fn is not None:
            self._log_fn(level, message)

    def _fetch_design(self, metric, timeout):
        response = _rpc.call(self._get_design,
                             report_service_pb2.GetDesignRequest(metric=metric), timeout)
        design = parse_design(response)
        self._store.save_design(metric, response.SerializeToString())
        with self._mu:
            self._designs[metric] = design
        return design

    def _design_for(self, metric, wait):
        with self._mu:
            if metric in self._designs:
                return self._designs[metric]
        stored = self._store.load_design(metric)
        if stored is not None:
            try:
                design = parse_design(report_service_pb2.GetDesignResponse.FromString(stored))
                with self._mu:
                    self._designs[metric] = design
                return design
            except Exception:  # a cached design that no longer parses is fetched again
                pass
        if wait <= 0:
            with self._mu:
                self._stale.add(metric)
            self._wake.set()
            raise DeniableError(grpc.StatusCode.UNAVAILABLE,
                                f"metric \"{metric}\": design not known yet; fetching it in the "
                                "background (or call prefetch)")
        return self._fetch_design(metric, min(wait, self._rpc_timeout))

    def _refresh_stale(self):
        with self._mu:
            metrics, self._stale = sorted(self._stale), set()
        for metric in metrics:
            try:
                self._fetch_design(metric, self._rpc_timeout)
            except DeniableError as e:
                self._log("warning", f"design of \"{metric}\" not refreshed: {e}")

    def _next_backoff(self, k):
        bound = min(self._max_backoff, self._initial_backoff * (2 ** min(k, 30)))
        with self._mu:
            return self._rng.uniform(bound)

    def _count(self, **deltas):
        with self._mu:
            for name, delta in deltas.items():
                setattr(self._session, name, getattr(self._session, name) + delta)

    def _drop(self, entries, counter, reason):
        self._store.remove(entries, False, {counter: len(entries)})
        self._log("error", f"dropped {len(entries)} reports: {reason}")

    def _send_one_batch(self, timeout):
        """One SubmitReports call for the oldest batch. Returns (outcome, DeniableError|None),
        outcome in empty, sent, split, permanent, transient. REQUIRES: _send_mu held."""
        rows = self._store.peek_oldest(self._batch_limit)
        if not rows:
            return "empty", None
        now = self._clock()
        too_old, live, reports = [], [], []
        for sequence, metric, blob in rows:
            report = report_service_pb2.Report.FromString(blob)
            if now - report.event_time_seconds > self._max_age:
                too_old.append((sequence, metric))
            else:
                live.append((sequence, metric))
                reports.append(report)
        if too_old:
            self._drop(too_old, "dropped_too_old", f"older than max_report_age "
                                                   f"({self._max_age} s)")
            return "sent", None
        self._count(send_attempts=1)
        size = len(reports)
        try:
            response = _rpc.call(self._submit,
                                 report_service_pb2.SubmitReportsRequest(reports=reports), timeout)
        except DeniableError as failure:
            self._count(failed_attempts=1)
            if not is_permanent_batch_error(failure.code):
                self._log("info", f"batch of {size} reports not delivered, will retry: {failure}")
                return "transient", failure
            if size > 1:  # too large for this server, or one bad report in it: halve
                self._batch_limit = size // 2
                self._count(batch_splits=1)
                self._log("warning", f"batch of {size} reports rejected whole ({failure}); "
                                     f"re-sending in batches of {self._batch_limit}")
                return "split", None
            reason = f"rejected by the collector for good: {failure}"
            self._drop(live, "dropped_rejected", reason)
            return "permanent", DeniableError(failure.code, f"dropped 1 report: {reason}")
        self._batch_limit = min(self._max_batch, self._batch_limit * 2)
        rejected = {}
        for r in response.rejections:
            if r.index >= size or r.index in rejected:
                malformed = DeniableError(grpc.StatusCode.UNAVAILABLE,
                                          f"malformed response: rejection index {r.index} in a "
                                          f"batch of {size}; nothing removed, will retry")
                self._log("warning", str(malformed))
                return "transient", malformed
            rejected[r.index] = r
        acknowledged = [e for i, e in enumerate(live) if i not in rejected]
        self._store.remove(acknowledged, True, {"acknowledged": len(acknowledged),
                                                "duplicates": response.duplicates})
        if response.stale_metrics:
            with self._mu:
                self._stale.update(response.stale_metrics)
        outcome: str = "sent"
        error: Optional[DeniableError] = None
        mismatch = grpc.StatusCode.FAILED_PRECONDITION.value[0]
        mismatched = [(live[i], reports[i]) for i, r in sorted(rejected.items())
                      if r.code == mismatch]
        dropped = [(live[i], r) for i, r in sorted(rejected.items())
                   if r.permanent and r.code != mismatch]
        kept = [(live[i], r) for i, r in sorted(rejected.items())
                if not r.permanent and r.code != mismatch]
        if mismatched:
            first = next(r for r in response.rejections if r.code == mismatch)
            reason = ("randomized with a design the collector does not have; fetching the "
                      f"design again, first: {first.reason}")
            self._forget_designs({(report.metric, report.design_version)
                                  for _, report in mismatched})
            self._drop([e for e, _ in mismatched], "dropped_design_mismatch", reason)
            outcome, error = "permanent", DeniableError(
                grpc.StatusCode.FAILED_PRECONDITION, f"dropped {len(mismatched)} reports: "
                                                     f"{reason}")
        if dropped:
            first = dropped[0][1]
            code = rejection_code(first.code)
            reason = f"rejected by the collector for good, first: {code.name}: {first.reason}"
            self._drop([e for e, _ in dropped], "dropped_rejected", reason)
            outcome, error = "permanent", DeniableError(code, f"dropped {len(dropped)} "
                                                              f"reports: {reason}")
        if kept:
            self._count(kept_after_rejection=len(kept))
            first = kept[0][1]
            error = DeniableError(grpc.StatusCode.UNAVAILABLE,
                                  f"{len(kept)} reports rejected for now, kept for retry, first: "
                                  f"{rejection_code(first.code).name}: {first.reason}")
            self._log("info", str(error))
            outcome = "transient"
        return outcome, error

    def _forget_designs(self, versions):
        """The collector disowned these (metric, design version) pairs: forget the cached
        design and that version's memoized bits (the next report draws afresh with the
        collector's design) and fetch the design again."""
        with self._mu:
            for metric, version in versions:
                self._designs.pop(metric, None)
                self._store.forget_design(metric, version)
                self._stale.add(metric)
        self._wake.set()

    def _sender_loop(self):
        wait = self._send_interval
        backoff = 0
        while not self._stop.is_set():
            self._wake.wait(wait)
            self._wake.clear()
            if self._stop.is_set():
                return
            self._refresh_stale()
            wait = self._send_interval
            with self._send_mu:
                while not self._stop.is_set():
                    try:
                        outcome, _ = self._send_one_batch(self._rpc_timeout)
                    except Exception as e:  # a store error: keep everything, try later
                        self._log("warning", f"sender: {e}")
                        outcome = "transient"
                    if outcome == "empty":
                        backoff = 0
                        break
                    if outcome == "transient":
                        wait = self._next_backoff(backoff)
                        backoff += 1
                        break
                    backoff = 0
