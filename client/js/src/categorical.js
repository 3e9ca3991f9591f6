// Categorical randomized response on the device: k-RR, OUE and OLH (docs/statistics.md section
// 5; Wang, Blocki, Li and Jha, USENIX Security 2017). The same mechanisms, parameters and wire
// form as the C++ SDK (common/categorical.h RandomizeCategory, proto/convert/categorical_convert.cc):
//   K_RR: the true category with p = e^eps / (e^eps + k - 1), each other one with
//         q = 1 / (e^eps + k - 1). Wire: {category}.
//   OUE:  k bits, the true one 1 with p* = 1/2, every other with q* = 1 / (e^eps + 1). Wire:
//         {bits}: base64 of ceil(k / 8) bytes, bit v in byte v >> 3 under 1 << (v & 7).
//   OLH:  g = max(2, round(e^eps + 1)) buckets, h(v) = ((a v + b) mod P) mod g, P = 2^31 - 1,
//         a uniform in [1, P - 1], b in [0, P - 1]; the bucket h(x) with p* = e^eps / (e^eps +
//         g - 1), each other bucket with (1 - p*) / (g - 1). Wire: {hashA, hashB, bucket}.
// Every number here is exact in doubles (a v + b < 2^40). Pure functions; randomness comes from
// the draw source passed in (the Reporter's RandomSource: crypto.getRandomValues).
import { DeniableError } from './errors.js';
import { toBase64 } from './http_transport.js';

export const MIN_CATEGORIES = 2;
export const MAX_CATEGORIES = 256;
export const LOCAL_HASH_PRIME = 2147483647;
export const MAX_HASH_BUCKETS = 65536;
// As the C++ SDK: a served (a, b) must match the recomputed (p*, q*) to this tolerance.
const CHANNEL_TOLERANCE = 1e-12;
const MECHANISMS = { K_RR: 'K_RR', OUE: 'OUE', OLH: 'OLH', 1: 'K_RR', 2: 'OUE', 3: 'OLH' };

/** OLH's g = max(2, round(e^eps + 1)) (half away from zero, as C++ std::round). */
export function hashBuckets(epsilon) {
  return Math.max(2, Math.floor(Math.exp(epsilon) + 1 + 0.5));
}

/** P(h(u) = h(v)) for u != v: pairs of distinct residues mod P equal mod g, over all pairs. */
export function collisionProbability(g) {
  const base = Math.floor(LOCAL_HASH_PRIME / g);
  const extra = LOCAL_HASH_PRIME % g;
  const hi = base + 1;
  const lo = base;
  const pairs = extra * hi * (hi - 1) + (g - extra) * lo * (lo - 1);
  return pairs / (LOCAL_HASH_PRIME * (LOCAL_HASH_PRIME - 1));
}

/** {pStar, qStar, g} of a mechanism ('K_RR', 'OUE', 'OLH') for (k, epsilon). */
export function supportChannel(mechanism, k, epsilon) {
  const e = Math.exp(epsilon);
  switch (MECHANISMS[mechanism]) {
    case 'K_RR':
      return { pStar: e / (e + k - 1), qStar: 1 / (e + k - 1), g: 0 };
    case 'OUE':
      return { pStar: 0.5, qStar: 1 / (e + 1), g: 0 };
    case 'OLH': {
      const g = hashBuckets(epsilon);
      const p = e / (e + g - 1);
      const c = collisionProbability(g);
      return { pStar: p, qStar: c * p + (1 - c) * (1 - p) / (g - 1), g };
    }
    default:
      throw new DeniableError('INVALID_ARGUMENT',
        `design.parameters.categorical.mechanism: must be K_RR, OUE or OLH, but is ${mechanism}`);
  }
}

/**
 * The categorical design of a served Design (JSON mapping) for a metric with `categories`:
 * {mechanism, k, epsilon, g, pStar, qStar}. Recomputes (p*, q*, g) and refuses a design whose
 * stated channel differs. Throws DeniableError INVALID_ARGUMENT naming the field.
 */
export function categoricalDesignFromWire(design, categories) {
  const c = (design && design.parameters && design.parameters.categorical) || null;
  if (!c) {
    throw new DeniableError('INVALID_ARGUMENT', 'design.parameters: a metric with categories needs a categorical design');
  }
  const mechanism = MECHANISMS[c.mechanism];
  if (!mechanism) {
    throw new DeniableError('INVALID_ARGUMENT',
      `design.parameters.categorical.mechanism: a served design names K_RR, OUE or OLH, but it is ${c.mechanism}`);
  }
  const k = categories.length;
  if (!(k >= MIN_CATEGORIES && k <= MAX_CATEGORIES)) {
    throw new DeniableError('INVALID_ARGUMENT', `categories: must name between ${MIN_CATEGORIES} and ${MAX_CATEGORIES} categories, but names ${k}`);
  }
  if (Number(design.categories) !== k) {
    throw new DeniableError('INVALID_ARGUMENT', `design.categories: is ${design.categories}, but the metric names ${k} categories`);
  }
  const epsilon = Number(c.epsilon);
  if (!(Number.isFinite(epsilon) && epsilon > 0)) {
    throw new DeniableError('INVALID_ARGUMENT', `design.parameters.categorical.epsilon: must be finite and > 0, but is ${c.epsilon}`);
  }
  if (mechanism === 'OLH' && hashBuckets(epsilon) > MAX_HASH_BUCKETS) {
    throw new DeniableError('INVALID_ARGUMENT', 'design.parameters.categorical.epsilon: too large for OLH');
  }
  const { pStar, qStar, g } = supportChannel(mechanism, k, epsilon);
  if (Math.abs(pStar - Number(design.a)) > CHANNEL_TOLERANCE || Math.abs(qStar - Number(design.b)) > CHANNEL_TOLERANCE) {
    throw new DeniableError('INVALID_ARGUMENT',
      `design: channel (a = ${design.a}, b = ${design.b}) does not match the mechanism (p* = ${pStar}, q* = ${qStar})`);
  }
  if (Number(design.hashBuckets ?? 0) !== g) {
    throw new DeniableError('INVALID_ARGUMENT', `design.hashBuckets: ${design.hashBuckets} does not match the mechanism (g = ${g})`);
  }
  return { mechanism, k, epsilon, g, pStar, qStar };
}

/** OLH's hash of category v: ((a v + b) mod P) mod g (exact: a v + b < 2^40). */
export function localHash(a, b, v, g) {
  return ((a * v + b) % LOCAL_HASH_PRIME) % g;
}

/** A uniform integer in [0, n), 1 <= n <= 2^32, from a RandomSource's bytes (rejection
 * sampling of 32-bit words: no modulo bias). */
export function randomBelow(source, n) {
  const limit = Math.floor(4294967296 / n) * n;
  for (;;) {
    const b = source.bytes(4);
    const u = ((b[0] << 24) >>> 0) + (b[1] << 16) + (b[2] << 8) + b[3];
    if (u < limit) return u % n;
  }
}

/** The draws randomizeCategory needs, from a RandomSource. */
export function drawsFrom(source) {
  return { bernoulli: (p) => source.uniform() < p, below: (n) => randomBelow(source, n) };
}

/**
 * The randomized report (CategoricalReport in the JSON mapping) for the true category index
 * `category` (0 <= category < k). draws: {bernoulli(p) -> boolean, below(n) -> [0, n)}.
 */
export function randomizeCategory(design, category, draws) {
  const { k } = design;
  if (!(Number.isInteger(category) && category >= 0 && category < k)) {
    throw new DeniableError('INVALID_ARGUMENT', `category: index must be in [0, ${k})`);
  }
  if (design.mechanism === 'K_RR') {
    if (draws.bernoulli(design.pStar)) return { category };
    const other = draws.below(k - 1);  // uniform over the k - 1 other categories
    return { category: other >= category ? other + 1 : other };
  }
  if (design.mechanism === 'OUE') {
    const bits = new Uint8Array((k + 7) >> 3);
    for (let v = 0; v < k; v++) {
      if (draws.bernoulli(v === category ? design.pStar : design.qStar)) bits[v >> 3] |= 1 << (v & 7);
    }
    return { bits: toBase64(bits) };
  }
  const a = 1 + draws.below(LOCAL_HASH_PRIME - 1);  // [1, P - 1]
  const b = draws.below(LOCAL_HASH_PRIME);          // [0, P - 1]
  const h = localHash(a, b, category, design.g);
  const e = Math.exp(design.epsilon);
  let bucket = h;
  if (!draws.bernoulli(e / (e + design.g - 1))) {  // uniform over the g - 1 other buckets
    const other = draws.below(design.g - 1);
    bucket = other >= h ? other + 1 : other;
  }
  return { hashA: a, hashB: b, bucket };
}

/** True when a report (JSON mapping) supports category v: the collector's rule. */
export function supports(design, report, v) {
  if (design.mechanism === 'K_RR') return Number(report.category ?? 0) === v;
  if (design.mechanism === 'OUE') {
    const bytes = Uint8Array.from(atob(report.bits ?? ''), (ch) => ch.charCodeAt(0));
    return ((bytes[v >> 3] >> (v & 7)) & 1) === 1;
  }
  return localHash(Number(report.hashA ?? 0), Number(report.hashB ?? 0), v, design.g) === Number(report.bucket ?? 0);
}
