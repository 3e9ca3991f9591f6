"""QueryClient: the analyst's side (QueryService) returning plain dataclasses.

    q = QueryClient("127.0.0.1:50051", insecure=True)
    q.create_metric("uses_drugs", symmetric_epsilon=1.0)
    p = q.prevalence("uses_drugs", level=0.95, method="WILSON")   # Prevalence
    by_region = q.prevalence("uses_drugs", group_by="region").groups  # [GroupPrevalence]
    q.prevalence("uses_drugs", start=today, interval="ANYTIME")  # valid at every look
    points = q.series("uses_drugs", start=t0, end=t1, bucket="DAY")   # [SeriesPoint]
    q.series("uses_drugs", start="-7d", end="now")   # times: Unix seconds, datetime, "-7d"
    d = q.difference("uses_drugs", (t0, t1), (t1, t2))  # d.change: this week - last week
    d.change_text                                        # "fell by 1.66 points"
    plan = q.plan(half_width=0.03, symmetric_epsilon=1.0)   # SurveyPlan: reports needed
    to_dataframe(points)   # a pandas.DataFrame indexed by the buckets' UTC start times
    q.create_metric("vote", categories=["Y", "N", "U", "A"], categorical=1.1)  # k-RR here
    q.prevalence("vote").shares   # [CategoryShare]: estimates, consistent shares, intervals
    q.create_metric("minutes", numeric=1.1, value_range=(0, 600), unit="minutes",
                    mechanism="D_BIT_FLIP", buckets=12)   # a numeric metric (docs/sdk.md)
    q.prevalence("minutes", quantiles=[0.5, 0.9]).numeric  # NumericEstimate: mean, total,
                                                           # buckets, quantiles, intervals
    q.create_metric("app", heavy_hitters=1.1, max_length=32)   # string values (heavy hitters)
    top = q.top_values("app")                 # TopValues: the common values, found unseen
    [(v.value, v.share, v.lower, v.upper) for v in top.values]
    q.frequencies("app", [b"chrome", "firefox"])   # TopValues: the shares of given values

Missing values are NaN: a bucket or group suppressed below min_reports has its n and NaN
estimates; a metric with categories has NaN yes/no fields (its figures are in `shares`), and so
does a numeric metric with a D_BIT_FLIP design (its figures are in `numeric`); a numeric figure
the server does not give (the mean of a D_BIT_FLIP design, anything of a suppressed selection)
is NaN too.
Errors are DeniableError with the server's code and message (which names the field).
Thread-safe (a gRPC channel is).
"""
import dataclasses
import datetime
import math
import re
import time
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from deniable import _rpc
from deniable.errors import DeniableError, StatusCode
from deniable.v1 import design_pb2, query_service_pb2, metric_pb2


@dataclasses.dataclass
class Metric:
    """A metric; for one with categories, a and b are the support channel (p*, q*)."""
    name: str
    description: str
    design_version: int
    a: float
    b: float
    epsilon: float
    reporting_period_seconds: int
    time_precision_seconds: int
    categories: List[str] = dataclasses.field(default_factory=list)
    mechanism: str = ""  # "K_RR", "OUE" or "OLH" for a metric with categories; "ONE_BIT_MEAN"
    #                      or "D_BIT_FLIP" for a numeric metric; "HEAVY_HITTERS" for one
    #                      of string values
    value_range: Optional[Tuple[float, float]] = None  # a numeric metric's (lo, hi)
    unit: str = ""  # a numeric metric's unit


@dataclasses.dataclass
class ValueShare:
    """One value's estimated share among the devices of a heavy-hitters metric (ValueShare in
    query_service.proto): `value` as bytes (`text`: decoded as UTF-8, None if it is not
    UTF-8); share debiased (may fall outside [0, 1]) and count = share * devices; the standard
    error with the hash-collision allowance (collision_sd alone); the value's interval at the
    confidence level and the simultaneous one (every value of the answer at once, Sidak);
    above_threshold (top_values: discovered by Benjamini-Hochberg); the reports the share is
    estimated from."""
    value: bytes
    share: float
    count: float
    standard_error: float
    collision_sd: float
    lower: float
    upper: float
    simultaneous_lower: float
    simultaneous_upper: float
    above_threshold: bool
    reports: int

    @property
    def text(self) -> Optional[str]:
        try:
            return self.value.decode("utf-8")
        except UnicodeDecodeError:
            return None


@dataclasses.dataclass
class TopValues:
    """top_values() and frequencies()'s answer (TopValues in query_service.proto): the newest
    design version's reports only (`reports_of_older_versions` in the range are not used);
    devices (reports of that version: one per device and window), estimation_reports (the
    held-out group), the confidence level and per-value level, `tested` (the values the
    simultaneous level covers), detection_threshold (the smallest share of a max_length value
    found with probability 0.9: smaller ones may be missed), the values, prefixes kept per
    discovery level, epsilon in nats per report."""
    metric: str
    design_version: int
    devices: int
    estimation_reports: int
    confidence_level: float
    per_value_level: float
    tested: int
    detection_threshold: float
    values: List[ValueShare]
    prefixes_per_level: List[int]
    epsilon: float
    reports_of_older_versions: int


def _top_values(t: Any) -> TopValues:
    return TopValues(
        metric=t.metric, design_version=t.design_version, devices=t.devices,
        estimation_reports=t.estimation_reports, confidence_level=t.confidence_level,
        per_value_level=t.per_value_level, tested=t.tested,
        detection_threshold=t.detection_threshold,
        values=[ValueShare(value=bytes(v.value), share=v.share, count=v.count,
                           standard_error=v.standard_error, collision_sd=v.collision_sd,
                           lower=v.lower, upper=v.upper, simultaneous_lower=v.simultaneous_lower,
                           simultaneous_upper=v.simultaneous_upper,
                           above_threshold=v.above_threshold, reports=v.reports)
                for v in t.values],
        prefixes_per_level=list(t.prefixes_per_level), epsilon=t.epsilon,
        reports_of_older_versions=t.reports_of_older_versions)


def _candidate(value: Any, i: int) -> bytes:
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError:
            raise DeniableError(StatusCode.INVALID_ARGUMENT,
                                f"values[{i}]: is not valid Unicode (a lone surrogate)") from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise DeniableError(StatusCode.INVALID_ARGUMENT,
                        f"values[{i}]: must be bytes or str, but is a {type(value).__name__}")


@dataclasses.dataclass
class NumericBucket:
    """One bucket [lower, upper) of a D_BIT_FLIP histogram (NumericBucket in
    query_service.proto; the last bucket includes upper): the reports that sampled it and, of
    those, the ones whose bit for it is 1; its share debiased (estimate, may fall outside
    [0, 1]) and projected onto the simplex (estimate_consistent); its own interval and the
    simultaneous one (all buckets at once)."""
    lower: float
    upper: float
    sampled: int
    ones: int
    estimate: float
    estimate_consistent: float
    standard_error: float
    ci_lower: float
    ci_upper: float
    simultaneous_lower: float
    simultaneous_upper: float


@dataclasses.dataclass
class NumericQuantile:
    """A quantile of the values from the histogram: the value below which `level` of them lie,
    with its interval from the simultaneous band on the cumulative shares."""
    level: float
    value: float
    ci_lower: float
    ci_upper: float


@dataclasses.dataclass
class NumericEstimate:
    """A numeric metric's estimates (NumericEstimate in query_service.proto; docs/statistics.md
    section 6), intervals at the Prevalence's confidence level. ONE_BIT_MEAN: the mean of the
    devices' values with its standard error and interval, and the total over the `devices`
    reporting devices (mean times devices); buckets and quantiles empty. D_BIT_FLIP: the
    buckets and the quantiles asked; the mean and total fields NaN. NaN wherever the server has
    no value (a suppressed selection). `estimand` says what the mean or histogram is of, in a
    number's words ("period_mean", "active_device_mean", "mean_period_mean",
    "period_distribution", ...; empty for a suppressed selection). Read a numeric answer from
    here only: the Prevalence's estimand ("active_device_prevalence"), estimate,
    estimated_yes_count and the other yes/no fields are the bit's (the share of
    (x - lo) / (hi - lo)), kept for readers older than this field (docs/http.md)."""
    lo: float
    hi: float
    unit: str
    mechanism: str  # "one_bit_mean" or "d_bit_flip"
    mean: float
    mean_standard_error: float
    mean_ci_lower: float
    mean_ci_upper: float
    total: float  # over the reporting devices, not over a population
    total_standard_error: float
    total_ci_lower: float
    total_ci_upper: float
    devices: int
    buckets: List[NumericBucket] = dataclasses.field(default_factory=list)
    quantiles: List[NumericQuantile] = dataclasses.field(default_factory=list)
    simultaneous_method: str = ""
    per_bucket_level: float = 0.0
    estimand: str = ""


@dataclasses.dataclass
class CategoryShare:
    """One category's share of a metric with categories (CategoryShare in query_service.proto).
    estimate is (c_v / n - q*) / (p* - q*), unclipped; estimate_consistent is the unbiased
    shares projected onto the simplex (Prevalence.consistent_method, "norm_sub"); [ci_lower,
    ci_upper] the category's own interval at the confidence level; [simultaneous_lower,
    simultaneous_upper] the simultaneous one (all k cover together at the level)."""
    category: str
    support_count: int
    support_share: float
    estimate: float
    estimate_consistent: float
    standard_error: float
    ci_lower: float
    ci_upper: float
    simultaneous_lower: float
    simultaneous_upper: float


def change_words(second_minus_first: float) -> str:
    """A change as a share (0.0166 is 1.66 percentage points) in words: "rose by 1.66 points",
    "fell by 1.66 points", or "unchanged (0.00 points)" when it rounds to 0.00; "unknown" for
    NaN. The CLI's words (tools/cli/output.h ChangeWords)."""
    points = 100.0 * second_minus_first
    if math.isnan(points):
        return "unknown"
    if abs(points) < 0.005:
        return "unchanged (0.00 points)"
    return f"{'rose' if points > 0 else 'fell'} by {abs(points):.2f} points"


class _SecondMinusFirst:
    """The change of a wire difference (first - second, with its interval) as second minus first:
    shared by Difference and CategoryDifference."""
    difference: float
    ci_lower: float
    ci_upper: float

    @property
    def change(self) -> float:
        return -self.difference

    @property
    def change_ci_lower(self) -> float:
        return -self.ci_upper

    @property
    def change_ci_upper(self) -> float:
        return -self.ci_lower

    @property
    def change_text(self) -> str:
        """"fell by 1.66 points" (change_words)."""
        return change_words(self.change)


@dataclasses.dataclass
class CategoryDifference(_SecondMinusFirst):
    """One category's change, stated as second minus first: change = second share - first share
    in [change_ci_lower, change_ci_upper] (Wald interval, this category alone). `difference`,
    ci_lower and ci_upper are the wire's first - second (CategoryDifference in
    query_service.proto)."""
    category: str
    difference: float
    standard_error: float
    ci_lower: float
    ci_upper: float


@dataclasses.dataclass
class GroupPrevalence:
    """One group of a group_by query (suppressed groups have no estimate: NaN fields)."""
    group: str
    n: int
    estimate: float
    standard_error: float
    ci_lower: float
    ci_upper: float
    suppressed: bool
    shares: List[CategoryShare] = dataclasses.field(default_factory=list)
    numeric: Optional[NumericEstimate] = None
    interval_kind: str = ""  # "FIXED_N" or "ANYTIME" (as in Prevalence)
    anytime_tuned_reports: int = 0


@dataclasses.dataclass
class Prevalence:
    """The debiased prevalence of a selection (Prevalence in query_service.proto).
    estimate is pi_hat = (lambda_hat - b) / (a - b), unclipped; estimate_clipped is in [0, 1].
    For a metric with categories the yes/no fields are 0 and `shares` holds one CategoryShare
    per category in the metric's order, with simultaneous_method ("sidak" or "bonferroni"),
    per_category_level (the level of each simultaneous interval) and consistent_method. For a
    numeric metric `numeric` holds the mean, total, histogram and quantiles (NumericEstimate);
    the yes/no fields describe the ONE_BIT_MEAN bit, and are NaN for D_BIT_FLIP.
    central_epsilon / central_delta: the shuffle-amplified (epsilon, delta) against an analyst
    who sees only counts (central_method "shuffle_numerical"), or the local epsilon
    ("local_only", central_note saying why)."""
    metric: str
    n: int
    yes_count: int
    estimate: float
    estimate_clipped: float
    standard_error: float
    ci_lower: float
    ci_upper: float
    confidence_level: float
    method: str
    epsilon: float
    start_time_seconds: int
    end_time_seconds: int
    groups: List[GroupPrevalence] = dataclasses.field(default_factory=list)
    shares: List[CategoryShare] = dataclasses.field(default_factory=list)
    simultaneous_method: str = ""
    per_category_level: float = 0.0
    consistent_method: str = ""
    central_epsilon: float = 0.0
    central_delta: float = 0.0
    central_method: str = ""
    central_note: str = ""
    # What the estimate is of ("period_prevalence", "mean_period_prevalence",
    # "precision_weighted_prevalence"), over how many reporting periods of what length.
    estimand: str = ""
    periods: int = 0
    reporting_period_seconds: int = 0
    # How the standard error is bounded ("independent_devices", "minkowski"), why this interval
    # method ("requested", or the design's default and why) and how the interval was built.
    variance_bound: str = ""
    method_reason: str = ""
    interval_construction: str = ""
    yes_share: float = 0.0  # lambda_hat = yes_count / n, the observed share of "yes" bits
    estimated_yes_count: float = 0.0  # n * estimate
    interval_clipped: bool = False  # an end of the interval was clipped to [0, 1]
    combination: str = ""  # how design versions were combined ("single_version", ...)
    design_version: int = 0  # the design the reports were randomized with
    design_a: float = 0.0
    design_b: float = 0.0
    versions: List["VersionEstimate"] = dataclasses.field(default_factory=list)
    suppressed: bool = False
    numeric: Optional[NumericEstimate] = None
    # Which guarantee the intervals carry: "FIXED_N" (one look) or "ANYTIME" (every look at
    # once, docs/statistics.md section 10); "" on a suppressed selection. anytime_tuned_reports:
    # for ANYTIME, the reports the confidence sequence was tuned at (0 otherwise).
    interval_kind: str = ""
    anytime_tuned_reports: int = 0


@dataclasses.dataclass
class VersionEstimate:
    """One design version's part of a combined estimate (VersionEstimate in
    query_service.proto); weight is its share of the combination."""
    design_version: int
    n: int
    yes_count: int
    estimate: float
    standard_error: float
    a: float
    b: float
    weight: float


@dataclasses.dataclass
class SeriesPoint:
    """One bucket of a series: [start, end) in Unix seconds."""
    start_time_seconds: int
    end_time_seconds: int
    n: int
    estimate: float
    standard_error: float
    ci_lower: float
    ci_upper: float
    suppressed: bool
    shares: List[CategoryShare] = dataclasses.field(default_factory=list)
    numeric: Optional[NumericEstimate] = None
    interval_kind: str = ""  # "FIXED_N" or "ANYTIME" (as in Prevalence)
    anytime_tuned_reports: int = 0


@dataclasses.dataclass
class Difference(_SecondMinusFirst):
    """The change between two selections, stated as second minus first: change =
    second.estimate - first.estimate in [change_ci_lower, change_ci_upper] (Wald, within
    [-1, 1]), change_text "fell by 1.66 points". standard_error = sqrt(se1^2 + se2^2)
    (independent reports). `difference`, ci_lower and ci_upper are the wire's first - second
    (Difference in query_service.proto); NaN for a metric with categories (see `shares`). For a
    numeric ONE_BIT_MEAN metric the change is of the mean, in the values' unit (`unit`; not
    clipped to [-1, 1]), and change_text says so ("rose by 2.5 minutes"); a D_BIT_FLIP
    histogram's change is per bucket in `shares` (category "[lower, upper)")."""
    first: Prevalence
    second: Prevalence
    difference: float
    standard_error: float
    ci_lower: float
    ci_upper: float
    confidence_level: float
    shares: List[CategoryDifference] = dataclasses.field(default_factory=list)
    unit: Optional[str] = None  # a numeric mean's unit ("" when it has none); None: a share

    @property
    def change_text(self) -> str:
        """"fell by 1.66 points" (change_words), or for a numeric mean "rose by 2.5 minutes"."""
        if self.unit is None:
            return change_words(self.change)
        change = self.change
        if math.isnan(change):
            return "unknown"
        if change == 0:
            return f"unchanged (0 {self.unit})".replace(" )", ")")
        return f"{'rose' if change > 0 else 'fell'} by {abs(change):.4g} {self.unit}".rstrip()


@dataclasses.dataclass
class SurveyPlan:
    """Reports a design needs for an interval of half_width (SurveyPlan in
    query_service.proto). variance_inflation is Var(randomized) / Var(direct question) at the
    assumed prevalence, 0 when it is unknown (worst case)."""
    design_a: float
    design_b: float
    epsilon: float
    reports_needed: int
    reports_needed_worst_case: int
    variance_inflation: float
    half_width: float
    confidence_level: float


def _shares(shares):
    return [CategoryShare(category=s.category, support_count=s.support_count,
                          support_share=s.support_share, estimate=s.estimate_unbiased,
                          estimate_consistent=s.estimate_consistent,
                          standard_error=s.standard_error, ci_lower=s.ci_lower,
                          ci_upper=s.ci_upper, simultaneous_lower=s.simultaneous_lower,
                          simultaneous_upper=s.simultaneous_upper) for s in shares]


_NAN = float("nan")

# A time of a query: Unix seconds (0: open), a datetime (naive means UTC), "now", or a time
# before now: "-90m", "-24h", "-7d", "-2w", "-30s" (as the CLI and the JavaScript SDK read them).
Time = Union[int, datetime.datetime, str]
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _to_seconds(value: Time, field: str, now: Callable[[], float]) -> int:
    """Unix seconds of `value` (see Time); INVALID_ARGUMENT naming `field` otherwise."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return math.floor(value.timestamp())
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        if value == "now":
            return math.floor(now())
        m = re.fullmatch(r"-(\d+)([smhdw])", value)
        if m:
            return math.floor(now()) - int(m.group(1)) * _UNIT_SECONDS[m.group(2)]
    raise DeniableError(StatusCode.INVALID_ARGUMENT,
                        f"{field}: must be Unix seconds, a datetime, \"now\" or a time before "
                        f"now (\"-7d\", \"-24h\", \"-90m\"), but is {value!r}")


def _missing(p) -> bool:
    """Whether the yes/no figures of Prevalence `p` are absent: suppressed, categorical, or a
    D_BIT_FLIP histogram."""
    return p.suppressed or len(p.shares) > 0 or (
        p.HasField("numeric") and p.numeric.mechanism == "d_bit_flip")


def _numeric(p) -> Optional[NumericEstimate]:
    """The NumericEstimate of wire Prevalence `p`, None when it has none; NaN for every figure
    of a suppressed selection."""
    if not p.HasField("numeric"):
        return None
    n = p.numeric

    def v(x: float) -> float:
        return _NAN if p.suppressed else x
    return NumericEstimate(
        lo=n.lo, hi=n.hi, unit=n.unit, mechanism=n.mechanism, mean=v(n.mean),
        mean_standard_error=v(n.mean_standard_error), mean_ci_lower=v(n.mean_ci_lower),
        mean_ci_upper=v(n.mean_ci_upper), total=v(n.total),
        total_standard_error=v(n.total_standard_error), total_ci_lower=v(n.total_ci_lower),
        total_ci_upper=v(n.total_ci_upper), devices=n.devices,
        buckets=[NumericBucket(lower=b.lower, upper=b.upper, sampled=b.sampled, ones=b.ones,
                               estimate=v(b.estimate_unbiased),
                               estimate_consistent=v(b.estimate_consistent),
                               standard_error=v(b.standard_error), ci_lower=v(b.ci_lower),
                               ci_upper=v(b.ci_upper), simultaneous_lower=v(b.simultaneous_lower),
                               simultaneous_upper=v(b.simultaneous_upper)) for b in n.buckets],
        quantiles=[NumericQuantile(level=q.level, value=v(q.value), ci_lower=v(q.ci_lower),
                                   ci_upper=v(q.ci_upper)) for q in n.quantiles],
        simultaneous_method=n.simultaneous_method, per_bucket_level=n.per_bucket_level,
        estimand=n.estimand)


def _or_nan(p, value):
    return _NAN if _missing(p) else value


def _group(g):
    return GroupPrevalence(group=g.group_value, n=g.n, estimate=_or_nan(g, g.estimate_unbiased),
                           standard_error=_or_nan(g, g.standard_error),
                           ci_lower=_or_nan(g, g.ci_lower), ci_upper=_or_nan(g, g.ci_upper),
                           suppressed=g.suppressed, shares=_shares(g.shares),
                           numeric=_numeric(g), interval_kind=_interval_kind(g),
                           anytime_tuned_reports=g.anytime_tuned_reports)


def _prevalence(p):
    suppressed = p.suppressed
    return Prevalence(
        metric=p.metric, n=p.n, yes_count=p.yes_count, estimate=_or_nan(p, p.estimate_unbiased),
        estimate_clipped=_or_nan(p, p.estimate_clipped),
        standard_error=_or_nan(p, p.standard_error),
        ci_lower=_or_nan(p, p.ci_lower), ci_upper=_or_nan(p, p.ci_upper),
        confidence_level=_NAN if suppressed else p.confidence_level,
        method="" if suppressed else query_service_pb2.IntervalMethod.Name(p.method),
        epsilon=p.epsilon, start_time_seconds=p.start_time_seconds,
        end_time_seconds=p.end_time_seconds, groups=[_group(g) for g in p.groups],
        shares=_shares(p.shares), simultaneous_method=p.simultaneous_method,
        per_category_level=p.per_category_level, consistent_method=p.consistent_method,
        central_epsilon=p.central_epsilon, central_delta=p.central_delta,
        central_method=p.central_method, central_note=p.central_note,
        estimand=p.estimand, periods=p.periods, reporting_period_seconds=p.reporting_period_seconds,
        variance_bound=p.variance_bound, method_reason=p.method_reason,
        interval_construction=p.interval_construction, yes_share=_or_nan(p, p.yes_share),
        estimated_yes_count=_or_nan(p, p.estimated_yes_count),
        interval_clipped=p.interval_clipped, combination=p.combination,
        design_version=p.design.version, design_a=p.design.a, design_b=p.design.b,
        versions=[VersionEstimate(design_version=v.design_version, n=v.n, yes_count=v.yes_count,
                                  estimate=v.estimate_unbiased, standard_error=v.standard_error,
                                  a=v.a, b=v.b, weight=v.weight) for v in p.versions],
        suppressed=suppressed, numeric=_numeric(p), interval_kind=_interval_kind(p),
        anytime_tuned_reports=p.anytime_tuned_reports)


def _point(b):
    return SeriesPoint(start_time_seconds=b.start_time_seconds,
                       end_time_seconds=b.end_time_seconds, n=b.n,
                       estimate=_or_nan(b, b.estimate_unbiased),
                       standard_error=_or_nan(b, b.standard_error),
                       ci_lower=_or_nan(b, b.ci_lower), ci_upper=_or_nan(b, b.ci_upper),
                       suppressed=b.suppressed, shares=_shares(b.shares),
                       numeric=_numeric(b), interval_kind=_interval_kind(b),
                       anytime_tuned_reports=b.anytime_tuned_reports)


def _interval_kind(p) -> str:
    if p.interval_kind == query_service_pb2.INTERVAL_KIND_UNSPECIFIED:
        return ""
    return query_service_pb2.IntervalKind.Name(p.interval_kind)


def _interval(name: Optional[str]) -> Any:
    """IntervalKind of "FIXED_N" / "ANYTIME" (any case; "fixed" too, as the CLI's
    --interval_kind); None: the server's default, FIXED_N."""
    if isinstance(name, str) and name.upper() == "FIXED":
        name = "FIXED_N"
    return _enum(query_service_pb2.IntervalKind, name, "interval")


def _enum(enum_type, name, field):
    if name is None:
        return 0
    try:
        return enum_type.Value(name.upper())
    except ValueError:
        raise DeniableError(StatusCode.INVALID_ARGUMENT,
                            f"{field}: unknown value \"{name}\"; one of "
                            f"{', '.join(enum_type.keys()[1:])}") from None


def design_parameters(symmetric_epsilon=None, forced_response=None, two_coin=False,
                      categorical=None, mechanism=None, numeric=None, buckets=0,
                      bucket_edges=(), sampled_buckets=0, unit="", heavy_hitters=None,
                      max_length=0, rows=0, width=0, holdout_share=0.0):
    """DesignParameters from keywords: symmetric_epsilon=1.0, forced_response=(p, q),
    two_coin=True, categorical=epsilon or numeric=epsilon (exactly one; categorical with
    mechanism="K_RR", "OUE", "OLH" or None for the server's choice of least variance; numeric
    with mechanism="ONE_BIT_MEAN", "D_BIT_FLIP" or None for the server's choice, and buckets
    (k equal-width buckets), bucket_edges (the k + 1 edges), sampled_buckets (D_BIT_FLIP's d)
    and unit); or heavy_hitters=epsilon for string values, with max_length (bytes), rows,
    width and holdout_share (0: the server's defaults 32, 16, 1024, 0.25; the server draws the
    hash salt)."""
    given = [x for x in (symmetric_epsilon, forced_response, two_coin or None, categorical,
                         numeric, heavy_hitters) if x is not None]
    if len(given) != 1:
        raise DeniableError(StatusCode.INVALID_ARGUMENT,
                            "design: give exactly one of symmetric_epsilon, forced_response, "
                            "two_coin, categorical, numeric, heavy_hitters")
    if heavy_hitters is not None:
        if mechanism is not None or buckets or bucket_edges or sampled_buckets or unit:
            raise DeniableError(StatusCode.INVALID_ARGUMENT,
                                "heavy_hitters: takes max_length, rows, width and "
                                "holdout_share, not mechanism, buckets or unit")
        return design_pb2.DesignParameters(heavy_hitters=design_pb2.HeavyHitters(
            epsilon=heavy_hitters, max_length=max_length, rows=rows, width=width,
            holdout_share=holdout_share))
    if max_length or rows or width or holdout_share:
        raise DeniableError(StatusCode.INVALID_ARGUMENT,
                            "max_length: max_length, rows, width and holdout_share only with "
                            "heavy_hitters=epsilon")
    if numeric is not None:
        return design_pb2.DesignParameters(numeric=design_pb2.Numeric(
            epsilon=numeric, mechanism=_enum(design_pb2.NumericMechanism, mechanism, "mechanism"),
            buckets=buckets, bucket_edges=list(bucket_edges), sampled_buckets=sampled_buckets,
            unit=unit))
    if buckets or bucket_edges or sampled_buckets or unit:
        raise DeniableError(StatusCode.INVALID_ARGUMENT,
                            "buckets: buckets, bucket_edges, sampled_buckets and unit only with "
                            "numeric=epsilon")
    if categorical is not None:
        return design_pb2.DesignParameters(categorical=design_pb2.Categorical(
            epsilon=categorical,
            mechanism=_enum(design_pb2.CategoricalMechanism, mechanism, "mechanism")))
    if mechanism is not None:
        raise DeniableError(StatusCode.INVALID_ARGUMENT,
                            "mechanism: only with categorical=epsilon or numeric=epsilon")
    if symmetric_epsilon is not None:
        return design_pb2.DesignParameters(
            symmetric_epsilon=design_pb2.SymmetricEpsilon(epsilon=symmetric_epsilon))
    if forced_response is not None:
        p, q = forced_response
        return design_pb2.DesignParameters(forced_response=design_pb2.ForcedResponse(p=p, q=q))
    return design_pb2.DesignParameters(two_coin=design_pb2.TwoCoin())


class QueryClient:
    """Analyst calls over gRPC. target/credentials/bearer_token/insecure as Reporter;
    timeout: seconds per call; now: the clock relative times ("-7d") are counted from (Unix
    seconds, default time.time). A query's start and end are Unix seconds, a datetime, "now" or
    a time before now ("-7d", "-24h", "-90m", "-2w"): INVALID_ARGUMENT naming the field
    otherwise."""

    def __init__(self, target: Optional[str] = None, *, channel: Any = None,
                 credentials: Any = None, bearer_token: Optional[str] = None,
                 insecure: bool = False, timeout: float = 10.0,
                 now: Callable[[], float] = time.time) -> None:
        self._now = now  # the clock of relative times ("-7d"), Unix seconds
        self._channel = channel or _rpc.make_channel(target, credentials, bearer_token, insecure)
        self._own = channel is None
        self._timeout = timeout
        q = query_service_pb2
        where = _rpc.Endpoint(target, not insecure) \
            if channel is None and target else None

        def stub(method: str, request: Any, response: Any) -> _rpc.Method:
            return _rpc.unary(self._channel, "QueryService", method, request, response, where)
        self._create = stub("CreateMetric", q.CreateMetricRequest, metric_pb2.Metric)
        self._list = stub("ListMetrics", q.ListMetricsRequest, q.ListMetricsResponse)
        self._prevalence = stub("GetPrevalence", q.GetPrevalenceRequest, q.Prevalence)
        self._series = stub("GetSeries", q.GetSeriesRequest, q.Series)
        self._difference = stub("GetDifference", q.GetDifferenceRequest, q.Difference)
        self._plan = stub("PlanSurvey", q.PlanSurveyRequest, q.SurveyPlan)
        self._top = stub("GetTopValues", q.GetTopValuesRequest, q.TopValues)
        self._frequencies = stub("GetFrequencies", q.GetFrequenciesRequest, q.TopValues)

    @classmethod
    def local(cls, target: Optional[str] = None, **options: Any) -> "QueryClient":
        """Development mode: QueryClient(target, insecure=True, **options) for a local
        plaintext deniable-server, target defaulting to $DENIABLE_TARGET, else
        127.0.0.1:50051 (as Reporter.local)."""
        return cls(_rpc.local_target(target), insecure=True, **options)

    def close(self) -> None:
        if self._own:
            self._channel.close()

    def __enter__(self) -> "QueryClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_metric(self, name: str, *, description: str = "",
                      reporting_period_seconds: int = 0, randomization: Optional[str] = None,
                      min_reports: int = 0, categories: Optional[Sequence[str]] = None,
                      value_range: Optional[Tuple[float, float]] = None,
                      **design: Any) -> str:
        """Creates a metric; design keywords as design_parameters(). categories: the names of
        a question with k answers (2 to 256), with categorical=epsilon. value_range: (lo, hi)
        of a numeric metric, with numeric=epsilon (unit= names the values' unit). Returns the
        raw Metric message's name. Errors: ALREADY_EXISTS, INVALID_ARGUMENT naming the
        field."""
        if value_range is not None and len(value_range) != 2:
            raise DeniableError(StatusCode.INVALID_ARGUMENT,
                                f"value_range: must be (lo, hi), but is {value_range!r}")
        numeric_range = None if value_range is None else metric_pb2.NumericRange(
            lo=value_range[0], hi=value_range[1], unit=design.get("unit", ""))
        request = query_service_pb2.CreateMetricRequest(
            range=numeric_range,
            name=name, description=description, design=design_parameters(**design),
            categories=list(categories or []),
            reporting_period_seconds=reporting_period_seconds, min_reports=min_reports,
            randomization=_enum(design_pb2.Randomization, randomization, "randomization"))
        return _rpc.call(self._create, request, self._timeout).name

    def list_metrics(self) -> List[Metric]:
        response = _rpc.call(self._list, query_service_pb2.ListMetricsRequest(), self._timeout)
        out: List[Metric] = []
        for m in response.metrics:
            d = m.design
            out.append(Metric(name=m.name, description=m.description, design_version=d.version,
                              a=d.a, b=d.b, epsilon=d.epsilon,
                              reporting_period_seconds=m.reporting_period_seconds,
                              time_precision_seconds=m.time_precision_seconds,
                              categories=list(m.categories),
                              mechanism=_mechanism_name(d.parameters),
                              value_range=(m.range.lo, m.range.hi) if m.HasField("range")
                              else None, unit=m.range.unit))
        return out

    def prevalence(self, metric: str, *, level: float = 0.95, method: Optional[str] = None,
                   group_by: str = "", start: Time = 0, end: Time = 0,
                   combination: Optional[str] = None,
                   simultaneous: Optional[str] = None,
                   quantiles: Sequence[float] = (), interval: Optional[str] = None,
                   anytime_tuned_reports: int = 0) -> Prevalence:
        """The debiased prevalence of `metric` over [start, end) (Unix seconds; 0: open); for a
        metric with categories, `shares` (simultaneous: "SIDAK", the default, or
        "BONFERRONI"); for a numeric metric, `numeric` (quantiles: the levels in (0, 1) a
        D_BIT_FLIP histogram's quantiles are estimated at; empty: 0.5, 0.9 and 0.99).
        interval: "FIXED_N" (None, the default: valid at one look) or "ANYTIME" (valid at every
        look at once: a confidence sequence, docs/statistics.md section 10, for [start, end)
        within one reporting period or calendar window; anytime_tuned_reports: the reports at
        which it is tightest, chosen before looking, 0 = 10000); the answer's interval_kind
        says which. Errors: INVALID_ARGUMENT naming "interval" for an unknown kind (before any
        call); FAILED_PRECONDITION naming "interval" for an ANYTIME selection spanning several
        periods or windows, "combination" or "quantiles" for what ANYTIME cannot serve."""
        request = query_service_pb2.GetPrevalenceRequest(
            metric=metric, confidence_level=level, group_by=group_by,
            start_time_seconds=_to_seconds(start, "start", self._now),
            end_time_seconds=_to_seconds(end, "end", self._now),
            method=_enum(query_service_pb2.IntervalMethod, method, "method"),
            simultaneous=_enum(query_service_pb2.SimultaneousMethod, simultaneous,
                               "simultaneous"),
            combination=_enum(query_service_pb2.VersionCombination, combination, "combination"),
            quantiles=list(quantiles), interval=_interval(interval),
            anytime_tuned_reports=anytime_tuned_reports)
        return _prevalence(_rpc.call(self._prevalence, request, self._timeout))

    def series(self, metric: str, *, start: Time, end: Time, bucket: str = "DAY",
               level: float = 0.95, method: Optional[str] = None,
               simultaneous: Optional[str] = None, interval: Optional[str] = None,
               anytime_tuned_reports: int = 0) -> List[SeriesPoint]:
        """One point per bucket (HOUR, DAY, WEEK, MONTH) of [start, end); with `shares` for a metric
        with categories. interval / anytime_tuned_reports: as in prevalence, per bucket."""
        request = query_service_pb2.GetSeriesRequest(
            metric=metric, start_time_seconds=_to_seconds(start, "start", self._now),
            end_time_seconds=_to_seconds(end, "end", self._now),
            bucket=_enum(query_service_pb2.BucketWidth, bucket, "bucket"),
            confidence_level=level,
            method=_enum(query_service_pb2.IntervalMethod, method, "method"),
            simultaneous=_enum(query_service_pb2.SimultaneousMethod, simultaneous,
                               "simultaneous"),
            interval=_interval(interval), anytime_tuned_reports=anytime_tuned_reports)
        series = _rpc.call(self._series, request, self._timeout)
        return [_point(b) for b in series.buckets]

    def difference(self, metric: str, first: Tuple[Time, Time], second: Tuple[Time, Time], *,
                   metric2: Optional[str] = None, level: float = 0.95,
                   combination: Optional[str] = None) -> Difference:
        """The change from `metric` over first = (start, end) to `metric2` (default: the same
        metric) over second = (start, end), as second minus first (Difference.change; Unix
        seconds, 0: open). Errors:
        NOT_FOUND for an unknown metric, INVALID_ARGUMENT naming the field, FAILED_PRECONDITION
        when a selection has too few reports."""
        comb = _enum(query_service_pb2.VersionCombination, combination, "combination")

        def selection(name, window, field):
            if len(window) != 2:
                raise DeniableError(StatusCode.INVALID_ARGUMENT,
                                    f"{field}: must be (start, end), but is {window!r}")
            return query_service_pb2.Selection(
                metric=name, start_time_seconds=_to_seconds(window[0], f"{field}[0]", self._now),
                end_time_seconds=_to_seconds(window[1], f"{field}[1]", self._now),
                combination=comb)
        request = query_service_pb2.GetDifferenceRequest(
            first=selection(metric, first, "first"),
            second=selection(metric2 or metric, second, "second"), confidence_level=level)
        d = _rpc.call(self._difference, request, self._timeout)
        missing = len(d.shares) > 0  # categorical or a histogram: the figures are per share
        mean = d.first.HasField("numeric") and d.first.numeric.mechanism == "one_bit_mean"

        def value(x: float) -> float:
            return _NAN if missing else x
        return Difference(first=_prevalence(d.first), second=_prevalence(d.second),
                          difference=value(d.difference),
                          standard_error=value(d.standard_error),
                          ci_lower=value(d.ci_lower), ci_upper=value(d.ci_upper),
                          confidence_level=d.confidence_level,
                          shares=[CategoryDifference(category=s.category, difference=s.difference,
                                                     standard_error=s.standard_error,
                                                     ci_lower=s.ci_lower, ci_upper=s.ci_upper)
                                  for s in d.shares],
                          unit=d.first.numeric.unit if mean else None)

    def top_values(self, metric: str, *, start: Time = 0, end: Time = 0, level: float = 0.95,
                   max_prefixes: int = 0) -> TopValues:
        """The most frequent values of a heavy-hitters metric over [start, end) (times as
        prevalence()), found with no candidates by extending prefixes level by level
        (max_prefixes kept per level, in [1, 4096]; 0: 64), each with its share estimated from
        the held-out estimation group (GetTopValues; docs/statistics.md section 11). level:
        the confidence level of each interval and of the simultaneous ones. Errors: NOT_FOUND
        for an unknown metric, FAILED_PRECONDITION for a metric of another kind,
        INVALID_ARGUMENT naming the field."""
        request = query_service_pb2.GetTopValuesRequest(
            metric=metric, start_time_seconds=_to_seconds(start, "start", self._now),
            end_time_seconds=_to_seconds(end, "end", self._now), confidence_level=level,
            max_prefixes=max_prefixes)
        return _top_values(_rpc.call(self._top, request, self._timeout))

    def frequencies(self, metric: str, values: Sequence[Union[bytes, str]], *,
                    start: Time = 0, end: Time = 0, level: float = 0.95,
                    estimation_group_only: bool = False) -> TopValues:
        """The shares of the given candidate values (bytes, or str sent as UTF-8; at most
        10 000, each within the design's max_length, no NUL) of a heavy-hitters metric over
        [start, end) (GetFrequencies), in the order given. estimation_group_only: estimate from
        the held-out group alone; set it for values chosen by looking at this data (a
        top_values() answer); otherwise every group that carries the whole value is pooled.
        Errors: INVALID_ARGUMENT "values[i]: ..." for a value that is not bytes or str (the
        server names a too long one), otherwise as top_values()."""
        if isinstance(values, (str, bytes)):
            raise DeniableError(StatusCode.INVALID_ARGUMENT,
                                "values: must be a list of values, not one value")
        request = query_service_pb2.GetFrequenciesRequest(
            metric=metric, start_time_seconds=_to_seconds(start, "start", self._now),
            end_time_seconds=_to_seconds(end, "end", self._now), confidence_level=level,
            values=[_candidate(v, i) for i, v in enumerate(values)],
            estimation_group_only=estimation_group_only)
        return _top_values(_rpc.call(self._frequencies, request, self._timeout))

    def plan(self, *, half_width: float, level: float = 0.95,
             assumed_prevalence: Optional[float] = None, **design: Any) -> SurveyPlan:
        """Reports needed for a confidence interval of +- half_width (in (0, 1)) with the
        design given by keywords as design_parameters(); assumed_prevalence in [0, 1] or None
        for the worst case. Errors: INVALID_ARGUMENT naming the field."""
        request = query_service_pb2.PlanSurveyRequest(
            design=design_parameters(**design), half_width=half_width, confidence_level=level,
            assumed_prevalence=-1.0 if assumed_prevalence is None else assumed_prevalence)
        p = _rpc.call(self._plan, request, self._timeout)
        return SurveyPlan(design_a=p.design.a, design_b=p.design.b, epsilon=p.design.epsilon,
                          reports_needed=p.reports_needed,
                          reports_needed_worst_case=p.reports_needed_worst_case,
                          variance_inflation=p.variance_inflation, half_width=p.half_width,
                          confidence_level=p.confidence_level)


def _mechanism_name(parameters: Any) -> str:
    kind = parameters.WhichOneof("kind")
    if kind == "categorical":
        return design_pb2.CategoricalMechanism.Name(parameters.categorical.mechanism)
    if kind == "numeric":
        return design_pb2.NumericMechanism.Name(parameters.numeric.mechanism)
    if kind == "heavy_hitters":
        return "HEAVY_HITTERS"
    return ""


def to_dataframe(rows: Sequence[Any], pandas_module: Any = None) -> Any:
    """A pandas.DataFrame of a list of dataclasses (groups, series points, metrics) or of one
    Prevalence (one row, without its groups, shares and versions). Series points are indexed by
    their bucket's start as a UTC DatetimeIndex named "start", with an "end" column of UTC
    datetimes in place of the Unix seconds. Suppressed buckets and groups keep their n and have
    NaN estimates. A row with a NumericEstimate gets its scalar figures as columns prefixed
    "numeric_" (numeric_mean, numeric_mean_ci_lower, numeric_total, numeric_devices, ...;
    its buckets and quantiles are frames of their own: to_dataframe(p.numeric.buckets)).
    Raises ImportError naming pandas when it is not installed (apt-get install
    python3-pandas)."""
    if pandas_module is None:
        try:
            import pandas
        except ImportError:
            raise ImportError("to_dataframe needs pandas (apt-get install python3-pandas or "
                              "pip install deniable[pandas]); the dataclasses work without it")
        pandas_module = pandas
    if dataclasses.is_dataclass(rows):
        rows = [rows]
    records = []
    for row in rows:
        record = dataclasses.asdict(row)
        record.pop("groups", None)
        record.pop("shares", None)
        record.pop("versions", None)
        numeric = record.pop("numeric", None)
        if numeric is not None:
            for key, value in numeric.items():
                if key not in ("buckets", "quantiles"):
                    record[f"numeric_{key}"] = value
        records.append(record)
    frame = pandas_module.DataFrame.from_records(records)
    if rows and all(isinstance(row, SeriesPoint) for row in rows):
        start = pandas_module.to_datetime(frame.pop("start_time_seconds"), unit="s", utc=True)
        frame["end"] = pandas_module.to_datetime(frame.pop("end_time_seconds"), unit="s",
                                                 utc=True)
        frame.index = pandas_module.DatetimeIndex(start, name="start")
    return frame
