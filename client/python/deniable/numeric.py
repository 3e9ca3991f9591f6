"""Numeric reports on the device: 1BitMean and dBitFlip (docs/statistics.md section 6; Ding,
Kulkarni and Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017), with alpha-point
rounding for memoization. The device's path is common/include/deniable/common/numeric.h's, and
tests/golden/randomizer_vectors.json holds this module to it:

1. clip(): a value outside [lo, hi] becomes the nearest end (the Reporter counts it in
   DeliveryStats.values_clipped).
2. level_of(): the clipped value becomes an integer level, the one thing memoized:
   ONE_BIT_MEAN: alpha-point rounding to the grid of edges e_0 .. e_k: with x in
   [e_L, e_{L+1}] and r = (x - e_L) / (e_{L+1} - e_L), the level is L + 1 when r > alpha, else
   L (alpha in [0, 1) drawn once per device and metric, kept in the device file);
   D_BIT_FLIP: the bucket j with e_j <= x < e_{j+1} (x = hi: the last one).
3. randomize(): ONE_BIT_MEAN one bernoulli(1/(e^eps + 1) + t (e^eps - 1)/(e^eps + 1)) with
   t = (e_level - lo) / (hi - lo): Report.bit. D_BIT_FLIP: d distinct buckets, the i-th draw
   randbelow(k - i) indexing the buckets not yet drawn in ascending order; then for each sampled
   bucket in ascending order one bernoulli(a / (a + 1)) for the level's bucket, else
   bernoulli(1 / (a + 1)), a = e^(eps/2): Report.numeric (buckets ascending, one bit each).

Pure functions; the randomness comes from the `rng` passed in (the Reporter's: `secrets`).
"""
import bisect
import dataclasses
import math
from typing import Any, Tuple

from deniable.errors import DeniableError, StatusCode
from deniable.v1 import design_pb2, report_service_pb2

ONE_BIT_MEAN, D_BIT_FLIP = design_pb2.ONE_BIT_MEAN, design_pb2.D_BIT_FLIP
MAX_BUCKETS = 256
MECHANISM_NAMES = {ONE_BIT_MEAN: "one_bit_mean", D_BIT_FLIP: "d_bit_flip"}
# As the C++ SDK (NumericDesignFromWire): a served (a, b) must match the mechanism's channel to
# this absolute tolerance.
CHANNEL_TOLERANCE = 1e-12


@dataclasses.dataclass(frozen=True)
class NumericDesign:
    """A numeric design: mechanism (design_pb2.ONE_BIT_MEAN or D_BIT_FLIP), epsilon in nats, the
    k + 1 ascending edges (edges[0] = lo, edges[-1] = hi), D_BIT_FLIP's d (0 for ONE_BIT_MEAN)
    and the values' unit."""
    mechanism: int
    epsilon: float
    edges: Tuple[float, ...]
    sampled_buckets: int
    unit: str = ""

    @property
    def k(self) -> int:
        return len(self.edges) - 1

    @property
    def lo(self) -> float:
        return self.edges[0]

    @property
    def hi(self) -> float:
        return self.edges[-1]


def _invalid(message: str) -> DeniableError:
    return DeniableError(StatusCode.INVALID_ARGUMENT, message)


def make_design(mechanism: int, epsilon: float, edges: Any, sampled_buckets: int = 0,
                unit: str = "") -> NumericDesign:
    """A checked NumericDesign (NumericDesign::Create's rules): edges k + 1 finite ascending
    distinct values, 1 <= k <= 256; sampled_buckets D_BIT_FLIP's d in [1, k] (0 means k), 0 for
    ONE_BIT_MEAN; epsilon finite and > 0. Raises DeniableError(INVALID_ARGUMENT) naming
    "mechanism", "epsilon", "bucket_edges" or "sampled_buckets"."""
    field = "design.parameters.numeric"
    if mechanism not in MECHANISM_NAMES:
        raise _invalid(f"{field}.mechanism: a served design names ONE_BIT_MEAN or D_BIT_FLIP, "
                       f"but it is {mechanism}")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise _invalid(f"{field}.epsilon: must be finite and > 0, but is {epsilon}")
    edges = tuple(float(e) for e in edges)
    k = len(edges) - 1
    if not 1 <= k <= MAX_BUCKETS:
        raise _invalid(f"{field}.bucket_edges: must hold between 2 and {MAX_BUCKETS + 1} edges, "
                       f"but holds {len(edges)}")
    if not all(math.isfinite(e) for e in edges) or \
            any(edges[i] >= edges[i + 1] for i in range(k)):
        raise _invalid(f"{field}.bucket_edges: must be finite, ascending and distinct")
    d = int(sampled_buckets)
    if mechanism == ONE_BIT_MEAN:
        if d != 0:
            raise _invalid(f"{field}.sampled_buckets: must be 0 for ONE_BIT_MEAN, but is {d}")
    else:
        d = d or k
        if not 1 <= d <= k:
            raise _invalid(f"{field}.sampled_buckets: must be in [1, {k}], but is {d}")
    return NumericDesign(mechanism=mechanism, epsilon=float(epsilon), edges=edges,
                         sampled_buckets=d, unit=unit)


def channel(design: NumericDesign) -> Tuple[float, float]:
    """(a, b) as the collector serves them (numeric_convert.h): ONE_BIT_MEAN the bit at the
    range's ends, e^eps/(e^eps + 1) and 1/(e^eps + 1); D_BIT_FLIP one sampled bucket's bit,
    a'/(a' + 1) and 1/(a' + 1) with a' = e^(eps/2)."""
    e = math.exp(design.epsilon if design.mechanism == ONE_BIT_MEAN else design.epsilon / 2.0)
    return e / (e + 1.0), 1.0 / (e + 1.0)


def local_epsilon(design: NumericDesign) -> float:
    """The local epsilon (nats) of one report, what the ledger counts (NumericReportMechanism::
    Epsilon): epsilon for ONE_BIT_MEAN and for D_BIT_FLIP with d >= 2; epsilon / 2 with d = 1
    (one bucket's bit); 0 for a single bucket (the report says nothing)."""
    if design.mechanism == ONE_BIT_MEAN:
        return design.epsilon
    if design.k == 1:
        return 0.0
    return design.epsilon if design.sampled_buckets >= 2 else design.epsilon / 2.0


def design_from_wire(design: Any, value_range: Any = None) -> NumericDesign:
    """The NumericDesign of a served design_pb2.Design whose parameters are `numeric`, checked
    against the metric's range (GetDesignResponse.range, when set): the first edge must be its
    lo and the last its hi; and its (a, b) against the mechanism's channel(), so the SDK never
    randomizes with a design it cannot explain. A design without bucket_edges gets `buckets`
    equal-width buckets over the range. Raises DeniableError(INVALID_ARGUMENT) naming the
    field."""
    if design.parameters.WhichOneof("kind") != "numeric":
        raise _invalid("design.parameters: a numeric metric needs a numeric design")
    n = design.parameters.numeric
    has_range = value_range is not None and value_range.lo < value_range.hi
    edges = list(n.bucket_edges)
    if not edges and has_range:
        k = n.buckets or 1
        lo, hi = value_range.lo, value_range.hi
        edges = [lo + (hi - lo) * i / k for i in range(k)] + [hi]
    result = make_design(n.mechanism, n.epsilon, edges, n.sampled_buckets,
                         n.unit or (value_range.unit if value_range is not None else ""))
    if has_range and (result.lo != value_range.lo or result.hi != value_range.hi):
        raise _invalid(f"design.parameters.numeric.bucket_edges: run from {result.lo} to "
                       f"{result.hi}, but the metric's range is [{value_range.lo}, "
                       f"{value_range.hi}]")
    a, b = channel(result)
    if abs(a - design.a) > CHANNEL_TOLERANCE or abs(b - design.b) > CHANNEL_TOLERANCE:
        raise _invalid(f"design: channel (a = {design.a}, b = {design.b}) does not match the "
                       f"mechanism (a = {a}, b = {b})")
    return result


def clip(design: NumericDesign, value: float) -> Tuple[float, bool]:
    """(value in [lo, hi], whether it was clipped): a value outside the range becomes the
    nearest end (ClipValue). NaN becomes lo, clipped (the Reporter refuses NaN before)."""
    if math.isnan(value):
        return design.lo, True
    if value < design.lo:
        return design.lo, True
    if value > design.hi:
        return design.hi, True
    return float(value), False


def level_of(design: NumericDesign, x: float, alpha: float) -> int:
    """The level of a value x already in [lo, hi] (LevelOf): ONE_BIT_MEAN a grid point in
    [0, k] by alpha-point rounding with alpha in [0, 1); D_BIT_FLIP the bucket in [0, k)."""
    edges, k = design.edges, design.k
    # The largest L in [0, k - 1] with e_L <= x.
    cell = min(max(bisect.bisect_right(edges, x) - 1, 0), k - 1)
    if design.mechanism == D_BIT_FLIP:
        return cell
    r = (x - edges[cell]) / (edges[cell + 1] - edges[cell])
    return cell + 1 if r > alpha else cell


def one_bit_probability(design: NumericDesign, level: int) -> float:
    """P(bit = 1) of ONE_BIT_MEAN at grid point `level` (DKY17 equation 1)."""
    e = math.exp(design.epsilon)
    t = (design.edges[level] - design.lo) / (design.hi - design.lo)
    return 1.0 / (e + 1.0) + t * (e - 1.0) / (e + 1.0)


def randomize(design: NumericDesign, level: int, rng: Any) -> Any:
    """The randomized answer of `level` as a report_service_pb2.Report with only its answer set:
    `bit` (ONE_BIT_MEAN) or `numeric` (D_BIT_FLIP). rng: bernoulli(p) -> bool and
    randbelow(n) -> int in [0, n) (the Reporter's secure generator)."""
    k = design.k
    if design.mechanism == ONE_BIT_MEAN:
        if not 0 <= level <= k:
            raise _invalid(f"level: must be in [0, {k}]")
        return report_service_pb2.Report(bit=int(rng.bernoulli(one_bit_probability(design,
                                                                                    level))))
    if not 0 <= level < k:
        raise _invalid(f"level: must be in [0, {k})")
    remaining = list(range(k))
    sampled = []
    for i in range(design.sampled_buckets):
        sampled.append(remaining.pop(rng.randbelow(k - i)))
    sampled.sort()
    a = math.exp(design.epsilon / 2.0)
    bits = [rng.bernoulli(a / (a + 1.0) if j == level else 1.0 / (a + 1.0)) for j in sampled]
    return report_service_pb2.Report(
        numeric=report_service_pb2.NumericReport(buckets=sampled, bits=bits))
