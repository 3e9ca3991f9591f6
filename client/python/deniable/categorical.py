"""Categorical randomized response on the device: k-RR, OUE and OLH (statistics.md section 5).

The same mechanisms, parameters and wire form as the C++ SDK (common/categorical.h,
RandomizeCategory; proto/convert/categorical_convert.cc), after Wang, Blocki, Li and Jha,
"Locally Differentially Private Protocols for Frequency Estimation" (USENIX Security 2017):

* K_RR (direct encoding): the true category with p = e^eps / (e^eps + k - 1), each other one
  with q = 1 / (e^eps + k - 1). Wire: CategoricalReport.category.
* OUE: k bits, bit x (the truth) 1 with p* = 1/2, every other bit 1 with q* = 1 / (e^eps + 1),
  independently. Wire: CategoricalReport.bits, ceil(k / 8) bytes, bit v in byte v // 8 under
  mask 1 << (v % 8) (LSB first), the unused high bits 0.
* OLH: g = max(2, round(e^eps + 1)) buckets; a hash h(v) = ((a v + b) mod P) mod g with
  P = 2^31 - 1, a uniform in [1, P - 1], b uniform in [0, P - 1] (Carter and Wegman); the
  bucket h(x) with p* = e^eps / (e^eps + g - 1), each other bucket with (1 - p*) / (g - 1).
  Wire: hash_a, hash_b, bucket. q* = c p* + (1 - c)(1 - p*) / (g - 1), c the family's exact
  collision probability.

Every function is pure; the randomness comes from the `rng` passed in (the Reporter's: the OS
CSPRNG through `secrets`). The true category goes into randomize() and nowhere else.
"""
import dataclasses
import math

from deniable.errors import DeniableError, StatusCode
from deniable.v1 import design_pb2, report_service_pb2

MIN_CATEGORIES = 2
MAX_CATEGORIES = 256
LOCAL_HASH_PRIME = 2147483647  # 2^31 - 1
MAX_HASH_BUCKETS = 65536
K_RR, OUE, OLH = design_pb2.K_RR, design_pb2.OUE, design_pb2.OLH
# As the C++ SDK (CategoricalDesignFromWire): a served (a, b) must match the recomputed (p*, q*)
# to this absolute tolerance.
CHANNEL_TOLERANCE = 1e-12


@dataclasses.dataclass(frozen=True)
class CategoricalDesign:
    """A categorical design: mechanism (design_pb2.K_RR / OUE / OLH), k categories, epsilon in
    nats, OLH's bucket count g (0 otherwise) and the support channel (p*, q*)."""
    mechanism: int
    k: int
    epsilon: float
    g: int
    p_star: float
    q_star: float


def hash_buckets(epsilon):
    """OLH's g = max(2, round(e^eps + 1)) (round half away from zero, as C++ std::round)."""
    x = math.exp(epsilon) + 1.0
    return max(2, int(math.floor(x + 0.5)))


def collision_probability(g):
    """P(h(u) = h(v)) for u != v under h(v) = ((a v + b) mod P) mod g: the pairs of distinct
    residues mod P that agree mod g, over all pairs (the C++ HashCollisionProbability)."""
    big_p = float(LOCAL_HASH_PRIME)
    base, extra = divmod(LOCAL_HASH_PRIME, g)
    hi, lo = base + 1.0, float(base)
    pairs = extra * hi * (hi - 1.0) + (g - extra) * lo * (lo - 1.0)
    return pairs / (big_p * (big_p - 1.0))


def support_channel(mechanism, k, epsilon):
    """(p*, q*, g) of a mechanism for (k, epsilon) (common/src/categorical.cc SupportFor)."""
    e = math.exp(epsilon)
    if mechanism == K_RR:
        return e / (e + k - 1.0), 1.0 / (e + k - 1.0), 0
    if mechanism == OUE:
        return 0.5, 1.0 / (e + 1.0), 0
    if mechanism == OLH:
        g = hash_buckets(epsilon)
        p = e / (e + g - 1.0)
        c = collision_probability(g)
        return p, c * p + (1.0 - c) * (1.0 - p) / (g - 1.0), g
    raise DeniableError(StatusCode.INVALID_ARGUMENT,
                        f"design.parameters.categorical.mechanism: must be K_RR, OUE or OLH, "
                        f"but is {mechanism}")


def design_from_wire(design, categories):
    """The CategoricalDesign of a served design_pb2.Design for a metric with `categories`
    (GetDesignResponse.categories). Recomputes (p*, q*, g) from the mechanism, k and epsilon
    and refuses a design whose stated channel differs, so the SDK never randomizes with a
    design it cannot explain. Raises DeniableError(INVALID_ARGUMENT) naming the field."""
    invalid = StatusCode.INVALID_ARGUMENT
    if design.parameters.WhichOneof("kind") != "categorical":
        raise DeniableError(invalid, "design.parameters: a metric with categories needs a "
                                     "categorical design")
    c = design.parameters.categorical
    if c.mechanism not in (K_RR, OUE, OLH):
        raise DeniableError(invalid, "design.parameters.categorical.mechanism: a served design "
                                     f"names K_RR, OUE or OLH, but it is {c.mechanism}")
    k = len(categories)
    if not MIN_CATEGORIES <= k <= MAX_CATEGORIES:
        raise DeniableError(invalid, f"categories: must name between {MIN_CATEGORIES} and "
                                     f"{MAX_CATEGORIES} categories, but names {k}")
    if design.categories != k:
        raise DeniableError(invalid, f"design.categories: is {design.categories}, but the "
                                     f"metric names {k} categories")
    if not (math.isfinite(c.epsilon) and c.epsilon > 0):
        raise DeniableError(invalid, "design.parameters.categorical.epsilon: must be finite "
                                     f"and > 0, but is {c.epsilon}")
    if c.mechanism == OLH and hash_buckets(c.epsilon) > MAX_HASH_BUCKETS:
        raise DeniableError(invalid, "design.parameters.categorical.epsilon: too large for OLH")
    p, q, g = support_channel(c.mechanism, k, c.epsilon)
    if abs(p - design.a) > CHANNEL_TOLERANCE or abs(q - design.b) > CHANNEL_TOLERANCE:
        raise DeniableError(invalid, f"design: channel (a = {design.a}, b = {design.b}) does not "
                                     f"match the mechanism (p* = {p}, q* = {q})")
    if design.hash_buckets != g:
        raise DeniableError(invalid, f"design.hash_buckets: {design.hash_buckets} does not "
                                     f"match the mechanism (g = {g})")
    return CategoricalDesign(mechanism=c.mechanism, k=k, epsilon=c.epsilon, g=g, p_star=p,
                             q_star=q)


def local_hash(a, b, v, g):
    """OLH's hash of category v: ((a v + b) mod P) mod g."""
    return ((a * v + b) % LOCAL_HASH_PRIME) % g


def pack_bits(bits):
    """k bits (0/1) as ceil(k / 8) bytes, bit v in byte v // 8 under 1 << (v % 8)."""
    packed = bytearray((len(bits) + 7) // 8)
    for v, bit in enumerate(bits):
        if bit:
            packed[v // 8] |= 1 << (v % 8)
    return bytes(packed)


def unpack_bits(data, k):
    """The k bits of pack_bits' output."""
    return [(data[v // 8] >> (v % 8)) & 1 for v in range(k)]


def randomize(design, category, rng):
    """The randomized report_service_pb2.CategoricalReport for true category index `category`
    (0 <= category < k). rng: bernoulli(p) -> bool and randbelow(n) -> int in [0, n) (the
    Reporter's secure generator)."""
    k = design.k
    if not 0 <= category < k:
        raise DeniableError(StatusCode.INVALID_ARGUMENT, f"category: index must be in [0, {k})")
    if design.mechanism == K_RR:
        if rng.bernoulli(design.p_star):
            return report_service_pb2.CategoricalReport(category=category)
        other = rng.randbelow(k - 1)  # uniform over the k - 1 other categories
        return report_service_pb2.CategoricalReport(
            category=other + 1 if other >= category else other)
    if design.mechanism == OUE:
        bits = [rng.bernoulli(design.p_star if v == category else design.q_star)
                for v in range(k)]
        return report_service_pb2.CategoricalReport(bits=pack_bits(bits))
    g = design.g
    a = 1 + rng.randbelow(LOCAL_HASH_PRIME - 1)  # [1, P - 1]
    b = rng.randbelow(LOCAL_HASH_PRIME)          # [0, P - 1]
    h = local_hash(a, b, category, g)
    e = math.exp(design.epsilon)
    if rng.bernoulli(e / (e + g - 1.0)):
        bucket = h
    else:  # uniform over the g - 1 other buckets
        other = rng.randbelow(g - 1)
        bucket = other + 1 if other >= h else other
    return report_service_pb2.CategoricalReport(hash_a=a, hash_b=b, bucket=bucket)


def supports(design, report, v):
    """True when the wire report supports category v (the server's rule, categorical.h)."""
    if design.mechanism == K_RR:
        return report.category == v
    if design.mechanism == OUE:
        return unpack_bits(report.bits, design.k)[v] == 1
    return local_hash(report.hash_a, report.hash_b, v, design.g) == report.bucket
