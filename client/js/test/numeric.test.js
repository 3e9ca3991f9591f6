// Unit tests of the numeric reports (issue 28, node --test): clipping and its counter,
// alpha-point rounding and the device's alpha kept in the store (across a FileStore restart),
// the memo and ledger per level with the cap, the wire form of 1BitMean and dBitFlip, the
// channels by exact enumeration of the draws, and the errors for the wrong kind of metric.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import 'fake-indexeddb/auto';

import {
  FileStore, IndexedDbStore, Reporter, clipValue, levelOf, makeNumericDesign, numericChannel, numericDesignFromWire,
  numericLocalEpsilon, randomizeNumeric, seededRandom,
} from '../src/node.js';

const T0 = Date.UTC(2026, 10, 23, 12);
const DAY = 86400 * 1000;
const EPS = Math.log(3);
const quiet = { backgroundSending: false, initialBackoffMs: 1, maxBackoffMs: 2 };

function numericResponse(metric, mechanism, edges, sampledBuckets = 0) {
  const numeric = { mechanism, epsilon: EPS, bucketEdges: edges, buckets: edges.length - 1, unit: 'minutes' };
  if (sampledBuckets) numeric.sampledBuckets = sampledBuckets;
  const d = makeNumericDesign(mechanism, EPS, edges, sampledBuckets);
  const { a, b } = numericChannel(d);
  return {
    metric, timePrecisionSeconds: 3600, reportingPeriodSeconds: 86400, randomization: 'MEMOIZED',
    designFingerprint: '77', range: { lo: edges[0], hi: edges[edges.length - 1], unit: 'minutes' },
    design: { version: 1, epsilon: numericLocalEpsilon(d), a, b, parameters: { numeric } },
  };
}

// "mean": ONE_BIT_MEAN on the grid 0, 25, .., 100; "hist": D_BIT_FLIP, k = 4, d = 2; "yesno".
class NumericTransport {
  constructor() {
    this.received = [];
    this.designs = {
      mean: numericResponse('mean', 'ONE_BIT_MEAN', [0, 25, 50, 75, 100]),
      hist: numericResponse('hist', 'D_BIT_FLIP', [0, 10, 20, 40, 80], 2),
      yesno: { metric: 'yesno', design: { version: 1, a: 0.75, b: 0.25, epsilon: EPS } },
    };
  }

  async getDesign(metric) {
    return structuredClone(this.designs[metric]);
  }

  async submitReports(reports) {
    this.received.push(...structuredClone(reports));
    return { accepted: reports.length, duplicates: 0, staleMetrics: [], rejections: [] };
  }
}

const reporter = (transport, options = {}) => new Reporter({ transport, now: () => T0, random: seededRandom(7), ...quiet, ...options });

// {JSON of outcome -> exact probability} over every path of bernoulli / below draws.
function enumerate(draw) {
  const outcomes = new Map();
  let path = [];
  for (;;) {
    const taken = [];
    let prob = 1;
    const choose = (n) => {
      const choice = taken.length < path.length ? path[taken.length] : 0;
      taken.push([choice, n]);
      return choice;
    };
    const draws = {
      bernoulli: (p) => {
        const yes = choose(2) === 0;
        prob *= yes ? p : 1 - p;
        return yes;
      },
      below: (n) => {
        const c = choose(n);
        prob /= n;
        return c;
      },
    };
    const key = JSON.stringify(draw(draws));
    outcomes.set(key, (outcomes.get(key) ?? 0) + prob);
    while (taken.length > 0 && taken[taken.length - 1][0] === taken[taken.length - 1][1] - 1) taken.pop();
    if (taken.length === 0) return outcomes;
    path = [...taken.slice(0, -1).map(([c]) => c), taken[taken.length - 1][0] + 1];
  }
}

const MEAN = makeNumericDesign('ONE_BIT_MEAN', EPS, [0, 25, 50, 75, 100]);
const HIST = makeNumericDesign('D_BIT_FLIP', EPS, [0, 10, 20, 40, 80], 2);

test('clipping takes the nearest end', () => {
  assert.deepEqual(clipValue(MEAN, -3), { value: 0, clipped: true });
  assert.deepEqual(clipValue(MEAN, Infinity), { value: 100, clipped: true });
  assert.deepEqual(clipValue(MEAN, 100), { value: 100, clipped: false });
  assert.deepEqual(clipValue(MEAN, 42.5), { value: 42.5, clipped: false });
});

test('alpha-point rounding goes up when the fraction exceeds alpha, and is unbiased over alpha', () => {
  assert.deepEqual([0, 0.19, 0.2, 0.99].map((alpha) => levelOf(MEAN, 30, alpha)), [2, 2, 1, 1]);
  assert.equal(levelOf(MEAN, 25, 0), 1);
  assert.equal(levelOf(MEAN, 100, 0.999), 4);
  const steps = 10000;
  for (const x of [0, 3, 30, 61.25, 99.9, 100]) {
    let sum = 0;
    for (let i = 0; i < steps; i++) sum += MEAN.edges[levelOf(MEAN, x, (i + 0.5) / steps)];
    assert.ok(Math.abs(sum / steps - x) <= 25 / steps + 1e-9, `${x}`);
  }
  assert.deepEqual([0, 9.99, 10, 39, 40, 80].map((x) => levelOf(HIST, x, 0.5)), [0, 0, 1, 2, 3, 3]);
});

test('designs are checked against their rules and the metric range', () => {
  assert.throws(() => makeNumericDesign('ONE_BIT_MEAN', EPS, [0, 0, 1]), /bucketEdges/);
  assert.throws(() => makeNumericDesign('D_BIT_FLIP', EPS, [0, 1, 2], 3), /sampledBuckets/);
  assert.throws(() => makeNumericDesign('D_BIT_FLIP', 0, [0, 1, 2]), /epsilon/);
  assert.equal(makeNumericDesign('D_BIT_FLIP', EPS, [0, 1, 2]).d, 2);
  const r = numericResponse('m', 'ONE_BIT_MEAN', [0, 50, 100]);
  assert.throws(() => numericDesignFromWire(r.design, { lo: 0, hi: 90 }), /range/);
  delete r.design.parameters.numeric.bucketEdges;  // equal-width buckets over the range
  assert.deepEqual(numericDesignFromWire(r.design, r.range).edges, [0, 50, 100]);
  const h = numericResponse('m', 'D_BIT_FLIP', [0, 50, 100]);
  h.design.a = 0.75;  // ONE_BIT_MEAN's channel, not this design's
  assert.throws(() => numericDesignFromWire(h.design, h.range), /design: channel/);
});

test('the ledger counts the local epsilon of a report (d = 1: one bucket, epsilon / 2)', async () => {
  assert.equal(numericLocalEpsilon(HIST), EPS);
  const t = new NumericTransport();
  t.designs.one = numericResponse('one', 'D_BIT_FLIP', [0, 10, 20, 40, 80], 1);
  const r = reporter(t);
  await r.reportValue('one', 15);
  assert.ok(Math.abs((await r.ledger()).one.epsilonSpent - EPS / 2) < 1e-15);
});

test('1BitMean is DKY17 equation 1, by exact enumeration', () => {
  const e = Math.exp(EPS);
  for (let level = 0; level <= 4; level++) {
    const outcomes = enumerate((draws) => randomizeNumeric(MEAN, level, draws).bit);
    const t = MEAN.edges[level] / 100;
    assert.ok(Math.abs(outcomes.get('1') - (1 / (e + 1) + t * (e - 1) / (e + 1))) < 1e-14);
  }
});

test('dBitFlip samples d buckets uniformly and flips each with its own channel', () => {
  const a = Math.exp(EPS / 2);
  for (let level = 0; level < 4; level++) {
    const sampled = [0, 0, 0, 0];
    const ones = [0, 0, 0, 0];
    for (const [key, prob] of enumerate((draws) => randomizeNumeric(HIST, level, draws))) {
      const { bit, numeric } = JSON.parse(key);
      assert.equal(bit, 0);
      assert.equal(numeric.buckets.length, 2);
      assert.ok(numeric.buckets[0] < numeric.buckets[1]);
      numeric.buckets.forEach((j, i) => {
        sampled[j] += prob;
        if (numeric.bits[i]) ones[j] += prob;
      });
    }
    for (let j = 0; j < 4; j++) {
      assert.ok(Math.abs(sampled[j] - 0.5) < 1e-14);
      assert.ok(Math.abs(ones[j] / sampled[j] - (j === level ? a / (a + 1) : 1 / (a + 1))) < 1e-14);
    }
  }
});

test('reportValue sends bit for 1BitMean and numeric {buckets, bits} for dBitFlip', async () => {
  const t = new NumericTransport();
  const r = reporter(t);
  assert.ok(await r.reportValue('mean', 40));
  assert.ok(await r.reportValue('hist', 33));
  await r.flush(1000);
  const [mean, hist] = t.received;
  assert.ok(mean.bit === 0 || mean.bit === 1);
  assert.equal(mean.numeric, undefined);
  assert.equal(mean.categorical, undefined);
  assert.equal(mean.designFingerprint, '77');
  assert.equal(hist.bit, 0);
  assert.deepEqual(Object.keys(hist.numeric).sort(), ['bits', 'buckets']);
  assert.equal(hist.numeric.buckets.length, 2);
  assert.ok(hist.numeric.bits.every((b) => typeof b === 'boolean'));
  assert.ok(hist.numeric.buckets[0] < hist.numeric.buckets[1] && hist.numeric.buckets[1] < 4);
});

test('values outside the range are clipped and counted', async () => {
  const r = reporter(new NumericTransport(), { onePerPeriod: false });
  for (const v of [-5, 50, 1e12, 100]) await r.reportValue('mean', v);
  assert.equal((await r.stats()).valuesClipped, 2);
  assert.equal((await r.ledger()).mean.valuesClipped, 2);
  assert.equal((await r.ledger()).mean.randomizations, 3);  // levels 0, 2, 4 (100 memoized)
});

test('alpha is drawn once from the secure source and kept in the FileStore across restarts', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'deniable-numeric-')), 'device.json');
  const t = new NumericTransport();
  let uniforms = 0;
  const counting = seededRandom(3);
  const random = { bytes: (n) => counting.bytes(n), uniform: () => { uniforms += 1; return counting.uniform(); } };
  let now = T0;
  let r = reporter(t, { store: new FileStore({ path }), random, now: () => now });
  await r.reportValue('mean', 30);
  await r.close({ drainTimeoutMs: 0 });
  const { alpha } = { alpha: JSON.parse(readFileSync(path, 'utf8')).numericAlpha.mean };
  assert.ok(alpha >= 0 && alpha < 1);
  assert.equal(uniforms, 2);  // alpha, then the bit
  r = reporter(t, { store: new FileStore({ path }), random: seededRandom(99), now: () => now });
  for (let day = 1; day <= 3; day++) {
    now = T0 + day * DAY;
    await r.reportValue('mean', 30);
  }
  await r.close({ drainTimeoutMs: 0 });
  const state = JSON.parse(readFileSync(path, 'utf8'));
  assert.equal(state.numericAlpha.mean, alpha);
  assert.deepEqual(Object.keys(state.numericMemo), [`mean\u00001\u0000${0.2 > alpha ? 2 : 1}`]);
  assert.equal(state.ledger.mean.randomizations, 1);
});

test('a dBitFlip metric draws no alpha', async () => {
  const t = new NumericTransport();
  const store = new FileStore({ path: join(mkdtempSync(join(tmpdir(), 'deniable-numeric-')), 'd.json') });
  const r = reporter(t, { store });
  await r.reportValue('hist', 12);
  assert.deepEqual(await store.read((s) => s.numericAlpha ?? {}), {});
});

test('memo per level, ledger per distinct level, and the cap', async () => {
  const t = new NumericTransport();
  let now = T0;
  const r = reporter(t, { now: () => now, maxEpsilonPerMetric: 2.5 * EPS });
  for (const [day, v] of [12, 15, 19, 12].entries()) {  // bucket 1 every day
    now = T0 + day * DAY;
    assert.ok(await r.reportValue('hist', v));
  }
  await r.flush(1000);
  assert.equal(new Set(t.received.map((x) => JSON.stringify(x.numeric))).size, 1);
  assert.equal(new Set(t.received.map((x) => x.reportId)).size, 4);
  let ledger = (await r.ledger()).hist;
  assert.deepEqual([ledger.randomizations, ledger.reportsAccepted], [1, 4]);
  assert.ok(Math.abs(ledger.epsilonSpent - EPS) < 1e-12);
  now = T0 + 4 * DAY;
  await r.reportValue('hist', 50);  // bucket 3
  now = T0 + 5 * DAY;
  await assert.rejects(r.reportValue('hist', 0), (e) => e.code === 'RESOURCE_EXHAUSTED');
  assert.ok(await r.reportValue('hist', 11));  // memoized: free
  ledger = (await r.ledger()).hist;
  assert.ok(Math.abs(ledger.epsilonSpent - 2 * EPS) < 1e-12);
  assert.equal(await r.reportValue('hist', 11), null);  // one report per period
});

test('the wrong kind of metric and bad values are refused and queue nothing', async () => {
  const r = reporter(new NumericTransport());
  await assert.rejects(r.reportValue('yesno', 3), (e) => e.code === 'INVALID_ARGUMENT' &&
    e.detail.startsWith('metric: "yesno" is not a numeric metric'));
  await assert.rejects(r.report('mean', true), (e) => e.code === 'INVALID_ARGUMENT' &&
    e.detail.startsWith('metric: "mean" is a numeric metric') && e.message.includes('reportValue'));
  for (const bad of ['41', true, null, NaN, 12n]) {
    await assert.rejects(r.reportValue('mean', bad), (e) => e.code === 'INVALID_ARGUMENT' &&
      e.detail.startsWith('value: ') && !e.detail.includes('41'));
  }
  assert.equal(await r.pending(), 0);
  assert.deepEqual(await r.ledger(), {});
});

test('an IndexedDbStore (browsers) keeps the alpha and the memo per level across reporters', async () => {
  const t = new NumericTransport();
  let now = T0;
  let r = reporter(t, { store: new IndexedDbStore({ name: 'numeric-unit' }), now: () => now });
  await r.reportValue('mean', 30);
  await r.close({ drainTimeoutMs: 0 });
  r = reporter(t, { store: new IndexedDbStore({ name: 'numeric-unit' }), now: () => now, random: seededRandom(42) });
  now = T0 + DAY;
  await r.reportValue('mean', 30);
  now = T0 + 2 * DAY;
  await r.reportValue('mean', 1e9);  // clipped to 100: level 4
  await r.flush(1000);
  const [a, b, c] = t.received;
  assert.equal(a.bit, b.bit);
  const ledger = (await r.ledger()).mean;
  assert.deepEqual([ledger.reportsAccepted, ledger.randomizations, ledger.valuesClipped], [3, 2, 1]);
  assert.ok(c.bit === 0 || c.bit === 1);
  await r.close({ drainTimeoutMs: 0 });
});
