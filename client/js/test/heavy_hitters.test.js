// The JS SDK's heavy-hitters randomizer (src/heavy_hitters.js) against the golden vectors
// tests/golden/heavy_hitters_vectors.json, which the C++ and Python SDKs check too (issue 40):
// the raw hash table, the group draw, every group's prefix and hashes, and the reports; then
// SHA-256/HMAC against node:crypto and the value checks; then Reporter.reportString (the wire
// form, the group drawn once and kept across a FileStore restart, the memo keyed by an HMAC with
// no value in the store, ledger and cap, errors) and the QueryClient's top values and
// frequencies.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { FileStore, QueryClient, Reporter, secureRandom, seededRandom, supportChannel } from '../src/node.js';

import {
  drawGroup, fromHex, heavyHittersDesignFromWire, hmacSha256, makeHeavyHittersDesign, prefixOf, randomizeHeavyHitter,
  sha256, sketchHash, toHex, validateHeavyHitterValue, valueBytes,
} from '../src/heavy_hitters.js';
import { uniformDraws } from '../src/randomizer.js';

const VECTORS = new URL('../../../tests/golden/heavy_hitters_vectors.json', import.meta.url);
const load = () => JSON.parse(readFileSync(VECTORS, 'utf8'));

const designOf = (d) => makeHeavyHittersDesign({
  epsilon: d.epsilon, maxLength: d.max_length, rows: d.rows, width: d.width,
  holdoutShare: d.holdout_share, salt: d.salt,
});

test('the raw hash table', () => {
  const { hashes } = load();
  assert.ok(hashes.length > 100);
  for (const h of hashes) {
    assert.equal(sketchHash(BigInt(h.salt), h.width, h.group, h.row, fromHex(h.prefix_hex)), h.hash, JSON.stringify(h));
  }
});

test('every design, value, group and report', () => {
  const { vectors } = load();
  assert.ok(vectors.length >= 4);
  let reports = 0;
  for (const v of vectors) {
    const d = designOf(v.design);
    assert.ok(Math.abs(d.keepProbability - v.design.keep_probability) <= 1e-15, v.name);
    for (const g of v.group_draws) {
      const draws = uniformDraws(g.uniforms);
      assert.equal(drawGroup(d, draws), g.group, `${v.name} ${JSON.stringify(g)}`);
      assert.equal(draws.used, g.uniforms.length);
    }
    for (const entry of v.values) {
      const value = fromHex(entry.value_hex);
      assert.deepEqual(valueBytes(entry.value), value);
      validateHeavyHitterValue(d, value);
      assert.equal(entry.groups.length, d.levels + 1);
      for (const g of entry.groups) {
        const where = `${v.name} ${entry.value_hex} group ${g.group}`;
        const p = prefixOf(value, g.group);
        assert.equal(toHex(p), g.prefix_hex, where);
        const hashes = Array.from({ length: d.rows }, (_, row) => sketchHash(d.salt, d.width, g.group, row, p));
        assert.deepEqual(hashes, g.hashes, where);
        for (const r of g.reports) {
          const draws = uniformDraws(r.uniforms);
          const got = randomizeHeavyHitter(d, value, g.group, draws);
          assert.deepEqual(got, { bit: r.report.bit, heavyHitters: { group: r.report.group, row: r.report.row, coefficient: r.report.coefficient } }, where);
          assert.equal(draws.used, 3);
          reports += 1;
        }
      }
    }
  }
  assert.ok(reports > 100);
});

test('SHA-256 and HMAC-SHA256 agree with node:crypto', () => {
  assert.equal(toHex(sha256(new Uint8Array())), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  for (const n of [1, 55, 56, 63, 64, 65, 119, 200]) {
    const data = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
    assert.equal(toHex(sha256(data)), createHash('sha256').update(data).digest('hex'), `length ${n}`);
    const key = Uint8Array.from({ length: 32 }, (_, i) => i ^ n);
    assert.equal(toHex(hmacSha256(key, data)), createHmac('sha256', key).update(data).digest('hex'), `length ${n}`);
  }
});

test('values: strings as UTF-8; bad values name "value", never repeat it', () => {
  const d = makeHeavyHittersDesign({ maxLength: 4 });
  assert.deepEqual(valueBytes('é'), Uint8Array.of(0xc3, 0xa9));
  assert.deepEqual(valueBytes('😀'), Uint8Array.of(0xf0, 0x9f, 0x98, 0x80));
  for (const [bad, words] of [['secret', 'value: has 6 bytes; the metric allows at most 4'], ['a\u0000b', 'value: has a NUL byte at offset 1']]) {
    assert.throws(() => validateHeavyHitterValue(d, valueBytes(bad)), (e) => e.code === 'INVALID_ARGUMENT' &&
      e.detail.startsWith(words) && !e.message.includes('secret'));
  }
  for (const bad of [12, null, undefined, {}, '\ud800x', 'x\udc00']) {
    assert.throws(() => valueBytes(bad), (e) => e.code === 'INVALID_ARGUMENT' && e.detail.startsWith('value: '));
  }
  for (const [o, field] of [[{ epsilon: 0 }, 'epsilon'], [{ maxLength: 65 }, 'maxLength'], [{ rows: 0 }, 'rows'],
    [{ width: 1000 }, 'width'], [{ holdoutShare: 1 }, 'holdoutShare'], [{ salt: '18446744073709551616' }, 'salt'], [{ salt: 'x' }, 'salt']]) {
    assert.throws(() => makeHeavyHittersDesign(o), (e) => e.detail.startsWith(`design.parameters.heavyHitters.${field}: `), field);
  }  // The HTTP API prints a uint64 as a number up to 2^53 - 1 and as a string beyond (docs/http.md).
  const served = (salt) => ({ a: 0.75, b: 0.25, parameters: { heavyHitters: { salt } } });
  assert.equal(heavyHittersDesignFromWire(served(12345)).salt, 12345n);
  assert.equal(heavyHittersDesignFromWire(served('18446744073709551615')).salt, (1n << 64n) - 1n);
  assert.equal(heavyHittersDesignFromWire(served(undefined)).maxLength, 32);
  assert.throws(() => heavyHittersDesignFromWire({ ...served('1'), a: 0.7 }), (e) => e.detail.startsWith('design: channel'));
});

// ---- reportString ----
const T0 = Date.UTC(2026, 10, 23, 12);
const DAY = 86400 * 1000;
const EPS = Math.log(3);
const quiet = { backgroundSending: false, initialBackoffMs: 1, maxBackoffMs: 2 };

function hhResponse(metric, { maxLength = 8, salt = '4660' } = {}) {
  const d = makeHeavyHittersDesign({ maxLength, rows: 4, width: 64, salt });
  return {
    metric, timePrecisionSeconds: 3600, reportingPeriodSeconds: 86400, randomization: 'MEMOIZED',
    designFingerprint: '55',
    design: {
      version: 1, epsilon: d.epsilon, a: d.keepProbability, b: 1 - d.keepProbability,
      parameters: { heavyHitters: { epsilon: d.epsilon, maxLength, rows: 4, width: 64, holdoutShare: 0.25, salt } },
    },
  };
}

// "app": heavy hitters (maxLength 8, 4 x 64); "yesno"; "vote" (k-RR over Y, N); "mean" (numeric).
class HhTransport {
  constructor() {
    this.received = [];
    const { pStar, qStar } = supportChannel('K_RR', 2, EPS);
    this.designs = {
      app: hhResponse('app'),
      yesno: { metric: 'yesno', design: { version: 1, a: 0.75, b: 0.25, epsilon: EPS } },
      vote: {
        metric: 'vote', categories: ['Y', 'N'],
        design: { version: 1, a: pStar, b: qStar, epsilon: EPS, categories: 2, parameters: { categorical: { mechanism: 'K_RR', epsilon: EPS } } },
      },
      mean: {
        metric: 'mean', range: { lo: 0, hi: 100 },
        design: { version: 1, epsilon: EPS, a: Math.exp(EPS) / (Math.exp(EPS) + 1), b: 1 / (Math.exp(EPS) + 1),
          parameters: { numeric: { mechanism: 'ONE_BIT_MEAN', epsilon: EPS, bucketEdges: [0, 100] } } },
      },
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

const reporterOf = (transport, options = {}) => new Reporter({ transport, now: () => T0, random: seededRandom(7), ...quiet, ...options });

test('reportString sends one sketch bit for the device group', async () => {
  const t = new HhTransport();
  const r = reporterOf(t);
  assert.ok(await r.reportString('app', 'héllo'));
  await r.flush(5000);
  const [sent] = t.received;
  assert.equal(sent.designFingerprint, '55');
  assert.ok(sent.bit === 0 || sent.bit === 1);
  const { group, row, coefficient } = sent.heavyHitters;
  assert.ok(group >= 0 && group <= 9 && row >= 0 && row < 4 && coefficient >= 0 && coefficient < 64, JSON.stringify(sent));
  assert.equal(sent.categorical, undefined);
  assert.equal(sent.numeric, undefined);
});

test('a string and its UTF-8 bytes are one value: memoized, one randomization', async () => {
  const t = new HhTransport();
  let now = T0;
  const r = reporterOf(t, { now: () => now });
  await r.reportString('app', '日本');
  now += DAY;
  await r.reportString('app', new TextEncoder().encode('日本'));
  await r.flush(5000);
  const [a, b] = t.received;
  assert.deepEqual([a.heavyHitters, a.bit], [b.heavyHitters, b.bit]);
  assert.equal((await r.ledger()).app.randomizations, 1);
});

test('the group is drawn once with the secure source and kept; the store holds no value', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'deniable-hh-'));
  const path = join(dir, 'device.json');
  const t = new HhTransport();
  let now = T0;
  let uniforms = 0;
  const counting = { bytes: (n) => secureRandom.bytes(n), uniform: () => { uniforms += 1; return secureRandom.uniform(); } };
  const first = reporterOf(t, { store: new FileStore({ path }), random: counting, now: () => now });
  await first.reportString('app', 'chrome');
  assert.ok(uniforms > 0);
  now += DAY;
  await first.reportString('app', 'firefox');
  await first.close({ drainTimeoutMs: 0 });
  const text = readFileSync(path, 'utf8');
  for (const v of ['chrome', 'firefox']) {
    assert.ok(!text.includes(v), v);
    assert.ok(!text.includes(toHex(new TextEncoder().encode(v))), v);
  }
  const state = JSON.parse(text);
  const groups = Object.values(state.hhGroup);
  assert.equal(groups.length, 1);
  assert.equal(Object.keys(state.hhMemo).length, 2);
  assert.match(state.hhMemoKey, /^[0-9a-f]{64}$/);
  // A new reporter on the store keeps the group and the memo, whatever its own source draws.
  now += DAY;
  const second = reporterOf(t, { store: new FileStore({ path }), random: seededRandom(99), now: () => now });
  await second.reportString('app', 'chrome');
  await second.flush(5000);
  assert.equal((await second.ledger()).app.randomizations, 2);
  await second.close({ drainTimeoutMs: 0 });
  const [c1, , c3] = t.received;
  assert.deepEqual([c1.heavyHitters, c1.bit], [c3.heavyHitters, c3.bit]);
  assert.deepEqual(new Set(t.received.map((x) => x.heavyHitters.group)), new Set(groups));
});

test('memo per value, ledger per distinct value, the cap', async () => {
  const t = new HhTransport();
  let now = T0;
  const r = reporterOf(t, { now: () => now, maxEpsilonPerMetric: 2.5 * EPS });
  for (const [day, value] of ['a', 'b', 'a', 'b'].entries()) {
    now = T0 + day * DAY;
    assert.ok(await r.reportString('app', value));
  }
  const ledger = (await r.ledger()).app;
  assert.deepEqual([ledger.randomizations, ledger.reportsAccepted], [2, 4]);
  assert.ok(Math.abs(ledger.epsilonSpent - 2 * EPS) < 1e-12);
  now = T0 + 4 * DAY;
  await assert.rejects(r.reportString('app', 'c'), (e) => e.code === 'RESOURCE_EXHAUSTED');
  assert.ok(await r.reportString('app', 'b'));
  assert.equal(await r.reportString('app', 'a'), null);  // already reported this period
});

test('groups over 2000 seeded devices: a quarter in the estimation group, the rest uniform', async () => {
  const counts = new Array(10).fill(0);
  for (let seed = 0; seed < 2000; seed++) {
    const t = new HhTransport();
    const r = reporterOf(t, { random: seededRandom(seed) });
    await r.reportString('app', 'x');
    await r.flush(5000);
    counts[t.received[0].heavyHitters.group] += 1;
  }
  assert.ok(counts[0] > 420 && counts[0] < 580, JSON.stringify(counts));
  for (const c of counts.slice(1)) assert.ok(c > 120 && c < 215, JSON.stringify(counts));
});

test('wrong kinds and bad values are refused, name the field, queue nothing, never repeat the value', async () => {
  const t = new HhTransport();
  const logs = [];
  const r = reporterOf(t, { log: (level, m) => logs.push(m) });
  for (const [metric, kind] of [['yesno', 'is a yes/no metric'], ['vote', 'has categories (Y, N)'], ['mean', 'is a numeric metric']]) {
    await assert.rejects(r.reportString(metric, 'x'), (e) => e.code === 'FAILED_PRECONDITION' &&
      e.detail.startsWith(`metric: "${metric}" is not a heavy-hitters metric (it ${kind}`));
  }
  await assert.rejects(r.report('app', 'chrome'), (e) => e.code === 'FAILED_PRECONDITION' && e.detail.includes('reportString') && !e.message.includes('chrome'));
  await assert.rejects(r.report('app', true), (e) => e.code === 'FAILED_PRECONDITION');
  await assert.rejects(r.reportValue('app', 3), (e) => e.code === 'INVALID_ARGUMENT' && e.detail.includes('reportString'));
  for (const [bad, words] of [['toolongvalue', 'value: has 12 bytes; the metric allows at most 8'], ['a\u0000b', 'value: has a NUL byte at offset 1'],
    [42, 'value: must be a string or bytes'], [null, 'value: must be a string or bytes'], ['\ud800', 'value: is not valid Unicode']]) {
    await assert.rejects(r.reportString('app', bad), (e) => e.code === 'INVALID_ARGUMENT' && e.detail.startsWith(words) && !e.message.includes('toolong'), words);
  }
  assert.equal(await r.pending(), 0);
  assert.deepEqual(await r.ledger(), {});
  await r.reportString('app', 'secret1');
  await r.reportString('app', 'secret2');  // already reported this period
  await r.flush(5000);
  assert.ok(!logs.some((m) => m.includes('secret')), logs.join('\n'));
});

test('getTopValues and getFrequencies: the requests and the decoded values', async () => {
  const calls = [];
  const answer = {
    metric: 'app', devices: 1000, estimationReports: 250, tested: 2, detectionThreshold: 0.04,
    values: [{ value: Buffer.from('日本').toString('base64'), share: 0.3, aboveThreshold: true, reports: 250 }, { value: '/w==', share: 0 }],
  };
  const fetchImpl = async (url, init) => {
    calls.push([url, JSON.parse(init.body)]);
    return { ok: true, status: 200, text: async () => JSON.stringify(answer) };
  };
  const q = new QueryClient({ baseUrl: 'http://127.0.0.1:1', fetch: fetchImpl, now: () => T0 });
  const top = await q.getTopValues({ metric: 'app', start: '-7d', level: 0.9, maxPrefixes: 16 });
  assert.deepEqual(calls[0], ['http://127.0.0.1:1/v1/QueryService/GetTopValues',
    { metric: 'app', startTimeSeconds: T0 / 1000 - 7 * 86400, confidenceLevel: 0.9, maxPrefixes: 16 }]);
  assert.equal(top.values[0].text, '日本');
  assert.deepEqual(top.values[1].valueBytes, Uint8Array.of(0xff));
  assert.equal(top.values[1].text, null);
  await q.getFrequencies({ metric: 'app', values: ['日本', Uint8Array.of(1)], estimationGroupOnly: true });
  assert.deepEqual(calls[1], ['http://127.0.0.1:1/v1/QueryService/GetFrequencies',
    { metric: 'app', values: [Buffer.from('日本').toString('base64'), 'AQ=='], estimationGroupOnly: true }]);
  await assert.rejects(q.getFrequencies({ metric: 'app', values: [3] }), (e) => e.detail.startsWith('values[0]: must be a string or bytes'));
  await assert.rejects(q.getFrequencies({ metric: 'app', values: 'x' }), (e) => e.detail.startsWith('values: '));
});
