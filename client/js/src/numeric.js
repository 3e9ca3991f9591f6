// Numeric reports on the device: 1BitMean and dBitFlip (docs/statistics.md section 6; Ding,
// Kulkarni and Yekhanin, NeurIPS 2017), with alpha-point rounding for memoization. The device's
// path is common/include/deniable/common/numeric.h's; tests/golden/randomizer_vectors.json holds
// this file to it:
//   1. clipValue: a value outside [lo, hi] becomes the nearest end (counted: valuesClipped).
//   2. levelOf: ONE_BIT_MEAN: alpha-point rounding to the grid e_0 .. e_k: with x in
//      [e_L, e_{L+1}] and r = (x - e_L) / (e_{L+1} - e_L), level L + 1 when r > alpha, else L
//      (alpha in [0, 1) drawn once per device and metric, kept in the store);
//      D_BIT_FLIP: the bucket j with e_j <= x < e_{j+1} (x = hi: the last one).
//   3. randomizeNumeric: ONE_BIT_MEAN one bernoulli(1/(e^eps + 1) + t (e^eps - 1)/(e^eps + 1)),
//      t = (e_level - lo) / (hi - lo): {bit}. D_BIT_FLIP: d distinct buckets, the i-th draw
//      below(k - i) indexing the buckets not yet drawn in ascending order; then for each sampled
//      bucket in ascending order bernoulli(a / (a + 1)) for the level's bucket, else
//      bernoulli(1 / (a + 1)), a = e^(eps/2): {bit: 0, numeric: {buckets, bits}}.
// Pure functions; randomness comes from the draws passed in (crypto.getRandomValues).
import { DeniableError } from './errors.js';

export const MAX_BUCKETS = 256;
const MECHANISMS = { ONE_BIT_MEAN: 'ONE_BIT_MEAN', D_BIT_FLIP: 'D_BIT_FLIP', 1: 'ONE_BIT_MEAN', 2: 'D_BIT_FLIP' };
const FIELD = 'design.parameters.numeric';
// As the C++ SDK (NumericDesignFromWire): a served (a, b) must match the mechanism's channel.
const CHANNEL_TOLERANCE = 1e-12;

const invalid = (message) => new DeniableError('INVALID_ARGUMENT', message);

/**
 * A checked numeric design {mechanism, epsilon, edges, k, d, lo, hi, unit} (NumericDesign::Create's
 * rules): edges k + 1 finite ascending distinct numbers, 1 <= k <= 256; d D_BIT_FLIP's sampled
 * buckets in [1, k] (0 means k), 0 for ONE_BIT_MEAN. Throws INVALID_ARGUMENT naming the field.
 */
export function makeNumericDesign(mechanism, epsilon, edges, sampledBuckets = 0, unit = '') {
  const m = MECHANISMS[mechanism];
  if (!m) throw invalid(`${FIELD}.mechanism: a served design names ONE_BIT_MEAN or D_BIT_FLIP, but it is ${mechanism}`);
  const eps = Number(epsilon);
  if (!(Number.isFinite(eps) && eps > 0)) throw invalid(`${FIELD}.epsilon: must be finite and > 0, but is ${epsilon}`);
  const e = (edges ?? []).map(Number);
  const k = e.length - 1;
  if (!(k >= 1 && k <= MAX_BUCKETS)) {
    throw invalid(`${FIELD}.bucketEdges: must hold between 2 and ${MAX_BUCKETS + 1} edges, but holds ${e.length}`);
  }
  if (!e.every(Number.isFinite) || e.some((x, i) => i < k && x >= e[i + 1])) {
    throw invalid(`${FIELD}.bucketEdges: must be finite, ascending and distinct`);
  }
  let d = Number(sampledBuckets ?? 0);
  if (m === 'ONE_BIT_MEAN') {
    if (d !== 0) throw invalid(`${FIELD}.sampledBuckets: must be 0 for ONE_BIT_MEAN, but is ${d}`);
  } else {
    d = d || k;
    if (!(Number.isInteger(d) && d >= 1 && d <= k)) throw invalid(`${FIELD}.sampledBuckets: must be in [1, ${k}], but is ${d}`);
  }
  return Object.freeze({ mechanism: m, epsilon: eps, edges: Object.freeze(e), k, d, lo: e[0], hi: e[k], unit });
}

/** {a, b} as the collector serves them: ONE_BIT_MEAN the bit at the range's ends,
 * e^eps/(e^eps + 1) and 1/(e^eps + 1); D_BIT_FLIP one bucket's bit, a'/(a' + 1), 1/(a' + 1),
 * a' = e^(eps/2). */
export function numericChannel(design) {
  const e = Math.exp(design.mechanism === 'ONE_BIT_MEAN' ? design.epsilon : design.epsilon / 2);
  return { a: e / (e + 1), b: 1 / (e + 1) };
}

/** The local epsilon (nats) of one report, what the ledger counts: epsilon, or epsilon / 2 for
 * D_BIT_FLIP with d = 1 (one bucket's bit), 0 for a single bucket. */
export function numericLocalEpsilon(design) {
  if (design.mechanism === 'ONE_BIT_MEAN') return design.epsilon;
  if (design.k === 1) return 0;
  return design.d >= 2 ? design.epsilon : design.epsilon / 2;
}

/**
 * The numeric design of a served Design (JSON mapping) whose parameters are `numeric`, checked
 * against the metric's range (GetDesignResponse.range, when set). A design without bucketEdges
 * gets `buckets` equal-width buckets over the range. The served (a, b) must match the
 * mechanism's channel (numericChannel), so the SDK never randomizes with a design it cannot
 * explain.
 */
export function numericDesignFromWire(design, range) {
  const n = design && design.parameters && design.parameters.numeric;
  if (!n) throw invalid('design.parameters: a numeric metric needs a numeric design');
  const lo = Number(range?.lo ?? 0);
  const hi = Number(range?.hi ?? 0);
  const hasRange = range != null && lo < hi;
  let edges = Array.isArray(n.bucketEdges) ? n.bucketEdges : [];
  if (edges.length === 0 && hasRange) {
    const k = Number(n.buckets ?? 0) || 1;
    edges = [...Array.from({ length: k }, (_, i) => lo + (hi - lo) * i / k), hi];
  }
  const result = makeNumericDesign(n.mechanism, n.epsilon, edges, n.sampledBuckets ?? 0, n.unit || range?.unit || '');
  if (hasRange && (result.lo !== lo || result.hi !== hi)) {
    throw invalid(`${FIELD}.bucketEdges: run from ${result.lo} to ${result.hi}, but the metric's range is [${lo}, ${hi}]`);
  }
  const { a, b } = numericChannel(result);
  if (Math.abs(a - Number(design.a ?? 0)) > CHANNEL_TOLERANCE || Math.abs(b - Number(design.b ?? 0)) > CHANNEL_TOLERANCE) {
    throw invalid(`design: channel (a = ${design.a}, b = ${design.b}) does not match the mechanism (a = ${a}, b = ${b})`);
  }
  return result;
}

/** {value in [lo, hi], clipped}: a value outside the range becomes the nearest end (NaN: lo). */
export function clipValue(design, value) {
  if (Number.isNaN(value) || value < design.lo) return { value: design.lo, clipped: true };
  if (value > design.hi) return { value: design.hi, clipped: true };
  return { value, clipped: false };
}

/** The level of x in [lo, hi]: ONE_BIT_MEAN a grid point in [0, k] by alpha-point rounding
 * (alpha in [0, 1)), D_BIT_FLIP the bucket in [0, k). */
export function levelOf(design, x, alpha) {
  const { edges, k } = design;
  let cell = 0;  // the largest L in [0, k - 1] with e_L <= x
  while (cell + 1 < k && edges[cell + 1] <= x) cell += 1;
  if (design.mechanism === 'D_BIT_FLIP') return cell;
  const r = (x - edges[cell]) / (edges[cell + 1] - edges[cell]);
  return r > alpha ? cell + 1 : cell;
}

/** P(bit = 1) of ONE_BIT_MEAN at grid point `level` (DKY17 equation 1). */
export function oneBitProbability(design, level) {
  const e = Math.exp(design.epsilon);
  const t = (design.edges[level] - design.lo) / (design.hi - design.lo);
  return 1 / (e + 1) + t * (e - 1) / (e + 1);
}

/**
 * The randomized answer of `level` in the JSON mapping: {bit} (ONE_BIT_MEAN) or
 * {bit: 0, numeric: {buckets, bits}} (D_BIT_FLIP). draws: {bernoulli(p), below(n)}.
 */
export function randomizeNumeric(design, level, draws) {
  const { k } = design;
  if (design.mechanism === 'ONE_BIT_MEAN') {
    if (!(Number.isInteger(level) && level >= 0 && level <= k)) throw invalid(`level: must be in [0, ${k}]`);
    return { bit: draws.bernoulli(oneBitProbability(design, level)) ? 1 : 0 };
  }
  if (!(Number.isInteger(level) && level >= 0 && level < k)) throw invalid(`level: must be in [0, ${k})`);
  const remaining = Array.from({ length: k }, (_, j) => j);
  const buckets = [];
  for (let i = 0; i < design.d; i++) buckets.push(remaining.splice(draws.below(k - i), 1)[0]);
  buckets.sort((x, y) => x - y);
  const a = Math.exp(design.epsilon / 2);
  const bits = buckets.map((j) => draws.bernoulli(j === level ? a / (a + 1) : 1 / (a + 1)));
  return { bit: 0, numeric: { buckets, bits } };
}
