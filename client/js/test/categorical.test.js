// Unit tests of the categorical reports (issue 14, node --test): the randomizers' channels by
// exact enumeration (OLH's q* over seeded draws against an exact binomial bound), the wire form,
// memo and ledger per category, the cap, errors, the design check, a store of the previous
// format, and the design-mismatch rule.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  FileStore, LOCAL_HASH_PRIME as P, Reporter, categoricalDesignFromWire, randomBelow,
  randomizeCategory, seededRandom, supportChannel, supports, drawsFrom,
} from '../src/node.js';

const T0 = Date.UTC(2026, 10, 23, 12);
const quiet = { backgroundSending: false, initialBackoffMs: 1, maxBackoffMs: 2 };
const VOTE = ['Y', 'N', 'U', 'A'];

function servedDesign(mechanism, k, epsilon, version = 1) {
  const { pStar, qStar, g } = supportChannel(mechanism, k, epsilon);
  return {
    parameters: { categorical: { mechanism, epsilon } }, version, a: pStar, b: qStar, epsilon,
    epsilonInfinite: false, categories: k, hashBuckets: g,
  };
}

class CategoricalTransport {
  constructor({ mechanism = 'K_RR', names = VOTE, epsilon = Math.log(3), design } = {}) {
    this.names = names;
    this.design = design ?? servedDesign(mechanism, names.length, epsilon);
    this.received = [];
    this.script = [];
    this.designCalls = 0;
  }

  async getDesign(metric) {
    this.designCalls += 1;
    if (metric === 'yesno') {
      return { metric, design: { version: 1, a: 0.75, b: 0.25, epsilon: Math.log(3) }, categories: [] };
    }
    return {
      metric, timePrecisionSeconds: 3600, reportingPeriodSeconds: 86400, randomization: 'MEMOIZED',
      designFingerprint: '66', design: this.design, categories: this.names,
    };
  }

  async submitReports(reports) {
    const step = this.script.shift();
    if (typeof step === 'function') return step(reports);
    this.received.push(...reports);
    return { accepted: reports.length, duplicates: 0, staleMetrics: [], rejections: [] };
  }
}

const reporter = (transport, options = {}) => new Reporter({ transport, now: () => T0, ...quiet, ...options });

// Follows one path through the draws and records its probability: bernoulli(p) is branch 0
// (true, p) or 1 (false, 1 - p); below(n) for n <= 1000 is branch i with 1/n; a larger n (OLH's
// hash draws) answers the next of `fixed` and records n.
function enumerate(draw, fixed = []) {
  const outcomes = new Map();
  let path = [];
  let large = [];
  for (;;) {
    const taken = [];
    const queue = [...fixed];
    large = [];
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
        if (n > 1000) {
          large.push(n);
          return queue.shift();
        }
        const c = choose(n);
        prob /= n;
        return c;
      },
    };
    const key = JSON.stringify(draw(draws));
    outcomes.set(key, (outcomes.get(key) ?? 0) + prob);
    while (taken.length > 0 && taken[taken.length - 1][0] === taken[taken.length - 1][1] - 1) taken.pop();
    if (taken.length === 0) return { outcomes, large };
    path = [...taken.slice(0, -1).map(([c]) => c), taken[taken.length - 1][0] + 1];
  }
}

function binomialBounds(n, p, tail) {
  const lgamma = (x) => {  // Lanczos (g = 7, n = 9): 15 digits, enough for a 1e-9 tail
    const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
      -176.61503916999185, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
      1.5056327351493116e-7];
    x -= 1;
    let a = c[0];
    const t = x + 7.5;
    for (let i = 1; i < 9; i++) a += c[i] / (x + i);
    return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
  };
  const pmf = (x) => Math.exp(lgamma(n + 1) - lgamma(x + 1) - lgamma(n - x + 1) + x * Math.log(p) + (n - x) * Math.log1p(-p));
  let lo = 0;
  let below = 0;
  while (below + pmf(lo) <= tail) below += pmf(lo++);
  let hi = n;
  let above = 0;
  while (above + pmf(hi) <= tail) above += pmf(hi--);
  return [lo, hi];
}

const near = (x, y, tol = 1e-15) => assert.ok(Math.abs(x - y) <= tol, `${x} vs ${y}`);

test('k-RR: the channel is p* on the diagonal and q* elsewhere, exactly', () => {
  for (const [k, eps] of [[2, 0.5], [4, Math.log(3)], [7, 2]]) {
    const d = categoricalDesignFromWire(servedDesign('K_RR', k, eps), Array.from({ length: k }, (_, i) => `c${i}`));
    for (let x = 0; x < k; x++) {
      const { outcomes } = enumerate((draws) => randomizeCategory(d, x, draws).category);
      assert.equal(outcomes.size, k);
      for (const [y, prob] of outcomes) near(prob, Number(y) === x ? d.pStar : d.qStar);
    }
    near(Math.log(d.pStar / d.qStar), eps, 1e-12);
  }
});

test('OUE: the bits are independent with p* for the truth and q* for the others, exactly', () => {
  const k = 5;
  const d = categoricalDesignFromWire(servedDesign('OUE', k, 1.2), ['a', 'b', 'c', 'd', 'e']);
  for (let x = 0; x < k; x++) {
    const { outcomes } = enumerate((draws) => randomizeCategory(d, x, draws));
    assert.equal(outcomes.size, 2 ** k);
    for (let v = 0; v < k; v++) {
      let support = 0;
      for (const [key, prob] of outcomes) if (supports(d, JSON.parse(key), v)) support += prob;
      near(support, v === x ? d.pStar : d.qStar);
    }
  }
});

test('OLH: given its hash, the true bucket with p* and each other with (1 - p*) / (g - 1)', () => {
  const names = ['a', 'b', 'c', 'd', 'e', 'f'];
  const d = categoricalDesignFromWire(servedDesign('OLH', 6, 1.5), names);
  assert.equal(d.g, 5);
  for (const [aMinus1, b] of [[0, 0], [12344, 678], [P - 2, P - 1], [2 ** 30, 99]]) {
    for (let x = 0; x < 6; x++) {
      const { outcomes, large } = enumerate((draws) => randomizeCategory(d, x, draws), [aMinus1, b]);
      assert.deepEqual(large, [P - 1, P]);  // a in [1, P - 1], b in [0, P - 1]
      const h = ((aMinus1 + 1) * x + b) % P % d.g;
      assert.equal(outcomes.size, d.g);
      for (const [key, prob] of outcomes) {
        const r = JSON.parse(key);
        assert.equal(r.hashA, aMinus1 + 1);
        assert.equal(r.hashB, b);
        near(prob, r.bucket === h ? d.pStar : (1 - d.pStar) / (d.g - 1));
      }
    }
  }
});

test('OLH: another category is supported with q* (hash collisions included) over seeded draws', () => {
  const n = 40000;
  const d = categoricalDesignFromWire(servedDesign('OLH', 3, 1.5), ['a', 'b', 'c']);
  const draws = drawsFrom(seededRandom(14));
  let own = 0;
  let other = 0;
  for (let i = 0; i < n; i++) {
    const r = randomizeCategory(d, 0, draws);
    own += supports(d, r, 0) ? 1 : 0;
    other += supports(d, r, 1) ? 1 : 0;
  }
  let [lo, hi] = binomialBounds(n, d.qStar, 1e-9);
  assert.ok(lo <= other && other <= hi, `${lo} <= ${other} <= ${hi}`);
  [lo, hi] = binomialBounds(n, d.pStar, 1e-9);
  assert.ok(lo <= own && own <= hi, `${lo} <= ${own} <= ${hi}`);
  const naive = (1 - d.pStar) / (d.g - 1);  // forgets collisions
  [lo, hi] = binomialBounds(n, naive, 1e-9);
  assert.ok(!(lo <= other && other <= hi));
});

test('the recomputed channels are the C++ ones', () => {
  let c = supportChannel('K_RR', 4, Math.log(3));
  near(c.pStar, 0.5);
  near(c.qStar, 1 / 6);
  c = supportChannel('OUE', 9, Math.log(3));
  near(c.qStar, 0.25, 1e-15);  // V8's Math.exp may differ from glibc's exp by an ulp
  assert.equal(c.g, 0);
  c = supportChannel('OLH', 9, Math.log(3));
  assert.equal(c.g, 4);
  near(c.qStar, 0.25, 1e-9);
  assert.notEqual(c.qStar, 0.25);
});

test('randomBelow rejects the words past the last whole multiple (no modulo bias)', () => {
  const words = [0xffffffff, 0xfffffffe, 7];  // for n = 3 the limit is 0xffffffff: reject it
  const source = {
    bytes: () => {
      const w = words.shift();
      return Uint8Array.of(w >>> 24, (w >>> 16) & 255, (w >>> 8) & 255, w & 255);
    },
    uniform: () => 0,
  };
  assert.equal(randomBelow(source, 3), 0xfffffffe % 3);
  assert.equal(words.length, 1);
  assert.equal(randomBelow(source, 3), 1);
});

test('each mechanism sends its wire form, bit 0, with the design fingerprint', async () => {
  for (const [mechanism, k] of [['K_RR', 4], ['OUE', 10], ['OLH', 5]]) {
    const names = Array.from({ length: k }, (_, i) => `c${i}`);
    const t = new CategoricalTransport({ mechanism, names, epsilon: 1.5 });
    const r = reporter(t);
    assert.equal((await r.report('vote', 'c3')).length, 16);
    await r.flush(1000);
    const [sent] = t.received;
    assert.equal(sent.bit, 0);
    assert.equal(sent.designFingerprint, '66');
    const c = sent.categorical;
    if (mechanism === 'K_RR') {
      assert.deepEqual(Object.keys(c), ['category']);
      assert.ok(c.category >= 0 && c.category < k);
    } else if (mechanism === 'OUE') {
      assert.deepEqual(Object.keys(c), ['bits']);
      const bytes = Buffer.from(c.bits, 'base64');
      assert.equal(bytes.length, 2);
      assert.equal(bytes[1] >> 2, 0);  // bits 10..15 unused
    } else {
      assert.deepEqual(Object.keys(c).sort(), ['bucket', 'hashA', 'hashB']);
      assert.ok(c.hashA >= 1 && c.hashA <= P - 1 && c.hashB >= 0 && c.hashB <= P - 1);
      assert.ok(c.bucket >= 0 && c.bucket < 5);
    }
    assert.deepEqual(await r.categories('vote'), names);
  }
});

test('memoized per category; the ledger counts epsilon once per distinct category', async () => {
  let now = T0;
  const t = new CategoricalTransport({ mechanism: 'OUE', epsilon: 1 });
  const r = reporter(t, { now: () => now });
  for (const [day, answer] of ['Y', 'N', 'Y', 'Y', 'N'].entries()) {
    now = T0 + day * 86400 * 1000;
    assert.ok(await r.report('vote', answer));
    assert.equal(await r.report('vote', 'U'), null);  // the period's report is queued already
  }
  await r.flush(1000);
  const bits = t.received.map((x) => x.categorical.bits);
  assert.equal(bits.length, 5);
  assert.equal(bits[0], bits[2]);
  assert.equal(bits[0], bits[3]);
  assert.equal(bits[1], bits[4]);
  assert.equal(new Set(t.received.map((x) => x.reportId)).size, 5);
  const l = (await r.ledger()).vote;
  assert.deepEqual([l.reportsAccepted, l.randomizations, l.reportsRepeatedInPeriod], [5, 2, 5]);
  near(l.epsilonSpent, 2, 1e-12);
  near(l.epsilonIfFresh, 5, 1e-12);
});

test('the cap refuses a new category but not a memoized one', async () => {
  const r = reporter(new CategoricalTransport({ epsilon: 1 }), { onePerPeriod: false, maxEpsilonPerMetric: 1.5 });
  await r.report('vote', 'Y');
  await assert.rejects(r.report('vote', 'N'), (e) => e.code === 'RESOURCE_EXHAUSTED');
  await r.report('vote', 'Y');
  assert.equal(await r.pending(), 2);
  near((await r.ledger()).vote.epsilonSpent, 1, 1e-12);
});

test('errors queue nothing, spend nothing and never repeat the answer', async () => {
  const r = reporter(new CategoricalTransport());
  await assert.rejects(r.report('vote', 'Maybe'), (e) => e.code === 'INVALID_ARGUMENT' &&
    /category: not one of the categories/.test(e.message) && /Y, N, U, A/.test(e.message) &&
    !/Maybe/.test(e.message));
  await assert.rejects(r.report('vote', true), (e) => e.code === 'FAILED_PRECONDITION');
  await assert.rejects(r.report('yesno', 'Y'), (e) => e.code === 'FAILED_PRECONDITION');
  assert.equal(await r.pending(), 0);
  assert.deepEqual(await r.ledger(), {});
});

test('a design whose channel does not match its mechanism is refused', async () => {
  const design = servedDesign('K_RR', 4, Math.log(3));
  design.a = 0.6;
  await assert.rejects(reporter(new CategoricalTransport({ design })).report('vote', 'Y'),
    (e) => e.code === 'INVALID_ARGUMENT' && /does not match/.test(e.message));
  const olh = servedDesign('OLH', 4, Math.log(3));
  olh.hashBuckets = 7;
  await assert.rejects(reporter(new CategoricalTransport({ design: olh })).report('vote', 'Y'),
    (e) => e.code === 'INVALID_ARGUMENT' && /design.hashBuckets/.test(e.message));
});

test('a FileStore of the previous format (no categoryMemo) keeps its state and memoizes', async () => {
  const path = join(mkdtempSync(join(tmpdir(), 'deniable-cat-')), 'device.json');
  writeFileSync(path, JSON.stringify({
    format: 'deniable-js-1', nextSequence: 2, queue: [], memo: { 'm\u00001\u00001': 1 },
    ledger: {}, counters: { acknowledged: 1, duplicates: 0, dropped_rejected: 0, dropped_queue_full: 0, dropped_too_old: 0 },
    designs: {},
  }));
  let now = T0;
  const t = new CategoricalTransport({ mechanism: 'OLH', epsilon: 1.5 });
  let r = reporter(t, { store: new FileStore({ path }), now: () => now });
  await r.report('vote', 'U');
  await r.flush(1000);
  await r.close({ drainTimeoutMs: 0 });
  now += 86400 * 1000;
  r = reporter(t, { store: new FileStore({ path }), now: () => now });
  await r.report('vote', 'U');
  await r.flush(1000);
  assert.deepEqual(t.received[0].categorical, t.received[1].categorical);
  assert.notEqual(t.received[0].reportId, t.received[1].reportId);
  assert.equal((await r.stats()).acknowledged, 3);
  await r.close({ drainTimeoutMs: 0 });
});

test('a design mismatch drops the report and forgets that version\'s category memo', async () => {
  let now = T0;
  const t = new CategoricalTransport({ mechanism: 'OUE', names: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'] });
  const r = reporter(t, { now: () => now });
  await r.report('vote', 'c');
  t.script.push(() => ({ accepted: 0, rejections: [{ index: 0, code: 9, reason: 'reports[0].design_fingerprint: mismatch', permanent: true }] }));
  await assert.rejects(r.flush(1000), (e) => e.code === 'FAILED_PRECONDITION');
  assert.equal((await r.stats()).droppedDesignMismatch, 1);
  // The same category on later days: drawn afresh once (not the forgotten draw), then memoized.
  const draws = [];
  for (let day = 1; day <= 2; day++) {
    now = T0 + day * 86400 * 1000;
    await r.report('vote', 'c');
    await r.flush(1000);
    draws.push(t.received.at(-1).categorical.bits);
  }
  assert.equal(draws[0], draws[1]);
  const l = (await r.ledger()).vote;
  assert.equal(l.randomizations, 2);
});
