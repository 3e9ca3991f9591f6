// Unit tests of the Reporter against a scripted collector (node --test).
import assert from 'node:assert/strict';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import 'fake-indexeddb/auto';

import { DeniableError, FileStore, IndexedDbStore, Reporter, epsilonOf, seededRandom } from '../src/node.js';
import { EPS1, FakeTransport } from './fake_transport.js';

const T0 = Date.UTC(2026, 10, 23, 12);
const quiet = { backgroundSending: false, initialBackoffMs: 1, maxBackoffMs: 2 };

function reporter(transport, options = {}) {
  return new Reporter({ transport, now: () => T0, ...quiet, ...options });
}

test('never calls Math.random; ids are 16 secure random bytes', async () => {
  const original = Math.random;
  Math.random = () => { throw new Error('Math.random used'); };
  try {
    const r = reporter(new FakeTransport(), { onePerPeriod: false });
    const a = await r.report('m', true);
    const b = await r.report('m', true);
    assert.equal(a.length, 16);
    assert.notDeepEqual(a, b);
  } finally {
    Math.random = original;
  }
});

test('memoizes one bit per (metric, version, answer) and counts epsilon once', async () => {
  const t = new FakeTransport();
  const r = reporter(t, { onePerPeriod: false });
  for (let i = 0; i < 200; i++) await r.report('m', true);
  await r.flush(1000);
  const bits = new Set(t.received.map((x) => x.bit));
  assert.equal(bits.size, 1);
  const l = (await r.ledger()).m;
  assert.equal(l.reportsAccepted, 200);
  assert.equal(l.reportsAcknowledged, 200);
  assert.equal(l.randomizations, 1);
  assert.ok(Math.abs(l.epsilonSpent - 1) < 1e-12);
  assert.ok(Math.abs(l.epsilonIfFresh - 200) < 1e-9);
  assert.ok(t.received.every((x) => !('answer' in x) && Object.keys(x).sort().join() ===
    'bit,designFingerprint,designVersion,eventTimeSeconds,labels,metric,reportId,windowFirsts'));
});

test('window flags follow the UTC calendar; a metric can turn them off; once sends one report', async () => {
  let now = T0;  // Monday 2026-11-23 12:00 UTC
  const t = new FakeTransport({ period: 3600 });
  const r = new Reporter({ transport: t, now: () => now, ...quiet });
  for (const step of [0, 3600, 86400, 7 * 86400]) {  // same day; next day; Tue 1 Dec
    now += step * 1000;
    assert.ok(await r.report('m', true));
  }
  await r.flush(1000);
  assert.deepEqual(t.received.map((x) => x.windowFirsts), [
    { day: true, week: true, month: true }, { day: false, week: false, month: false },
    { day: true, week: false, month: false }, { day: true, week: true, month: true }]);
  const off = new FakeTransport();
  off.windowFirstsOff = true;
  const r2 = reporter(off);
  await r2.report('m', true);
  await r2.flush(1000);
  assert.equal(off.received[0].windowFirsts, undefined);
  const once = new FakeTransport();
  once.reportingOnce = true;
  now = T0;
  const r3 = new Reporter({ transport: once, now: () => now, ...quiet });
  assert.ok(await r3.report('m', true));
  now += 30 * 86400 * 1000;
  assert.equal(await r3.report('m', true), null);
  await r3.flush(1000);
  assert.equal(once.received.length, 1);
});

test('one report per metric per period; the next period sends the memoized bit again', async () => {
  let now = T0;
  const t = new FakeTransport({ period: 3600 });
  const r = new Reporter({ transport: t, now: () => now, ...quiet });
  assert.ok(await r.report('m', true));
  assert.equal(await r.report('m', false), null);
  assert.equal(await r.report('m', true), null);
  let l = (await r.ledger()).m;
  assert.equal(l.reportsAccepted, 1);
  assert.equal(l.reportsRepeatedInPeriod, 2);
  now += 3600 * 1000;
  assert.ok(await r.report('m', true));
  await r.flush(1000);
  assert.equal(t.received.length, 2);
  assert.equal(t.received[0].bit, t.received[1].bit);
  assert.equal(t.received[1].eventTimeSeconds, String((now / 1000) - ((now / 1000) % 3600)));
});

test('fresh randomization needs a cap and stops at it', async () => {
  const fresh = () => reporter(new FakeTransport({ randomization: 'FRESH_PER_PERIOD' }), { onePerPeriod: false });
  await assert.rejects(fresh().report('m', true), (e) => e.code === 'FAILED_PRECONDITION' && /maxEpsilonPerMetric/.test(e.message));
  const r = reporter(new FakeTransport({ randomization: 'FRESH_PER_PERIOD' }), { onePerPeriod: false, maxEpsilonPerMetric: 2.5 });
  await r.report('m', true);
  await r.report('m', true);
  await assert.rejects(r.report('m', true), (e) => e.code === 'RESOURCE_EXHAUSTED');
  assert.equal(await r.pending(), 2);
});

test('bad input is refused, naming the field, and queues nothing', async () => {
  assert.throws(() => new Reporter({ transport: new FakeTransport(), maxBatchReports: 0 }), /maxBatchReports/);
  assert.throws(() => new Reporter({ baseUrl: 'ftp://x' }), /baseUrl/);
  const r = reporter(new FakeTransport());
  await assert.rejects(r.report('', true), /metric/);
  await assert.rejects(r.report('m', 'yes'), /answer/);
  await assert.rejects(r.report('unknown', true), (e) => e.code === 'NOT_FOUND');
  assert.equal(await r.pending(), 0);
});

test('every whole-batch code but INVALID_ARGUMENT is retried; each report delivered once', async () => {
  const codes = ['CANCELLED', 'UNKNOWN', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS',
    'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE',
    'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED'];
  for (const code of codes) {
    const t = new FakeTransport();
    const r = reporter(t, { onePerPeriod: false });
    for (let i = 0; i < 3; i++) await r.report('m', i % 2 === 0);
    t.script.push(code, code);
    await r.flush(5000);
    assert.equal(t.stored.size, 3, code);
    const s = await r.stats();
    assert.equal(s.queued, 0);
    assert.equal(s.acknowledged, 3);
    assert.equal(s.failedAttempts, 2, code);
    assert.equal(s.droppedRejected, 0, code);
  }
});

test('flush gives up after maxAttempts transient failures and keeps the reports', async () => {
  const t = new FakeTransport();
  const r = reporter(t, { maxAttempts: 3 });
  await r.report('m', true);
  t.script.push('UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE');
  await assert.rejects(r.flush(5000), (e) => e.code === 'UNAVAILABLE');
  assert.equal(await r.pending(), 1);
  await r.flush(5000);
  assert.equal(t.stored.size, 1);
});

test('INVALID_ARGUMENT: a batch is halved down to the bad report, only it is dropped and logged', async () => {
  const t = new FakeTransport();
  const logs = [];
  const r = reporter(t, { onePerPeriod: false, log: (level, m) => logs.push([level, m]) });
  for (let i = 0; i < 8; i++) await r.report('m', true);
  let first = null;
  // The collector rejects whole any batch holding the 6th report.
  t.script.push(...Array(20).fill((reports, self) => {
    first = first ?? reports.length;
    const queue = self.all ?? (self.all = reports.map((x) => x.reportId));
    if (reports.some((x) => x.reportId === queue[5])) throw new DeniableError('INVALID_ARGUMENT', 'reports[0].labels: bad');
    return self.accept(reports);
  }));
  await assert.rejects(r.flush(5000), (e) => e.code === 'INVALID_ARGUMENT' && /dropped 1 report/.test(e.message));
  const s = await r.stats();
  assert.equal(first, 8);
  assert.equal(t.stored.size, 7);
  assert.equal(s.droppedRejected, 1);
  assert.ok(s.batchSplits >= 3);
  assert.ok(logs.some(([level, m]) => level === 'error' && /dropped 1 reports/.test(m)));
});

test('per-report rejections: permanent dropped and counted, others kept and re-sent', async () => {
  const t = new FakeTransport();
  const r = reporter(t, { onePerPeriod: false });
  for (let i = 0; i < 4; i++) await r.report('m', true);
  t.script.push({ rejections: [{ index: 1, code: 3, reason: 'reports[1].bit', permanent: true },
    { index: 2, code: 5, reason: 'reports[2].metric', permanent: false }] });
  // The kept report makes the call transient (as in C++): flush retries and then succeeds.
  await r.flush(5000);
  const s = await r.stats();
  assert.equal(t.stored.size, 3);  // 0, 3 at once; 2 on the retry
  assert.equal(s.droppedRejected, 1);
  assert.equal(s.keptAfterRejection, 1);
  assert.equal(s.queued, 0);
});

test('a malformed rejection index removes nothing', async () => {
  const t = new FakeTransport();
  const r = reporter(t);
  await r.report('m', true);
  t.script.push({ rejections: [{ index: 7, code: 3, permanent: true }] });
  await r.flush(5000);
  assert.equal(t.calls, 2);
  assert.equal((await r.stats()).droppedRejected, 0);
});

test('reports older than maxReportAgeMs are dropped, not sent; a full queue drops the oldest', async () => {
  let now = T0;
  const t = new FakeTransport();
  const r = new Reporter({ transport: t, now: () => now, ...quiet, onePerPeriod: false, maxQueuedReports: 3, maxReportAgeMs: 7200e3 });
  for (let i = 0; i < 5; i++) await r.report('m', true);
  let s = await r.stats();
  assert.equal(s.queued, 3);
  assert.equal(s.droppedQueueFull, 2);
  now += 3 * 3600e3;
  await r.flush(5000);
  s = await r.stats();
  assert.equal(s.droppedTooOld, 3);
  assert.equal(t.calls, 0);
});

test('the background sender delivers without flush', async () => {
  const t = new FakeTransport();
  const r = new Reporter({ transport: t, sendIntervalMs: 10 });
  await r.report('m', true);
  for (let i = 0; i < 200 && t.stored.size === 0; i++) await new Promise((ok) => setTimeout(ok, 10));
  assert.equal(t.stored.size, 1);
  await r.close();
});

test('FileStore: 0600, survives a restart (queue, ledger, period, design), refuses foreign files', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'deniable-js-'));
  const path = join(dir, 'device.json');
  const t = new FakeTransport();
  let r = reporter(t, { store: new FileStore({ path }) });
  await r.report('m', true);
  await r.close({ drainTimeoutMs: 0 });
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const designCalls = t.designCalls;
  r = reporter(t, { store: new FileStore({ path }) });
  assert.equal(await r.pending(), 1);
  assert.equal(await r.report('m', false), null);  // same period, after a restart
  assert.equal(t.designCalls, designCalls);        // the design came from the file
  await r.flush(1000);
  assert.equal((await r.ledger()).m.reportsAcknowledged, 1);
  const foreign = join(dir, 'foreign.json');
  writeFileSync(foreign, '{"hello": 1}');
  const bad = reporter(t, { store: new FileStore({ path: foreign }) });
  await assert.rejects(bad.report('m', true), /DATA_LOSS/);
});

test('IndexedDbStore: the queue survives closing and reopening the database', async () => {
  const t = new FakeTransport();
  let r = reporter(t, { store: new IndexedDbStore({ name: 'unit' }) });
  await r.report('m', true);
  await r.close({ drainTimeoutMs: 0 });
  r = reporter(t, { store: new IndexedDbStore({ name: 'unit' }) });
  assert.equal(await r.pending(), 1);
  await r.flush(1000);
  assert.equal(await r.pending(), 0);
  assert.equal(t.stored.size, 1);
});

test('randomization follows the design: seeded, exact count of 20000 fresh draws', async () => {
  const t = new FakeTransport({ randomization: 'FRESH_PER_PERIOD' });
  const r = reporter(t, { onePerPeriod: false, maxEpsilonPerMetric: Infinity, random: seededRandom(7), maxBatchReports: 5000 });
  const n = 20000;
  for (let i = 0; i < n; i++) await r.report('m', true);
  await r.flush(10000);
  const ones = t.received.filter((x) => x.bit === 1).length;
  // Binomial(n, a): a fixed seed makes this exact; the bound is 5 standard deviations.
  const sd = Math.sqrt(n * EPS1.a * (1 - EPS1.a));
  assert.ok(Math.abs(ones - n * EPS1.a) < 5 * sd, `${ones} vs ${n * EPS1.a}`);
  assert.ok(Math.abs(epsilonOf(EPS1.a, EPS1.b) - 1) < 1e-12);
  assert.equal(epsilonOf(1, 0.5), Infinity);
});

test('a design mismatch drops only that report, forgets the memo and fetches the design again', async () => {
  const t = new FakeTransport();
  t.fingerprint = '8613200451273918273';  // above 2^53: kept exact as a string
  const r = reporter(t, { onePerPeriod: false });
  await r.report('m', true);
  await r.flush(1000);
  assert.equal(t.received[0].designFingerprint, '8613200451273918273');
  await r.report('m', true);  // the memoized bit again
  await r.report('m', false);
  assert.equal((await r.ledger()).m.randomizations, 2);
  t.fingerprint = '77';  // the collector's database was recreated
  t.script.push({
    rejections: [{ index: 0, code: 9, permanent: true, reason: 'reports[0].design_fingerprint: not m v1' }],
  });
  await assert.rejects(r.flush(1000), (e) => e.code === 'FAILED_PRECONDITION' && /dropped 1 reports/.test(e.message));
  const stats = await r.stats();
  assert.deepEqual([stats.droppedDesignMismatch, stats.droppedRejected, stats.queued, t.received.length], [1, 0, 0, 2]);
  assert.equal(t.designCalls, 2, 'the design was not fetched again');
  assert.equal((await r.ledger()).m.randomizations, 2, 'a dropped report was randomized again');
  await r.report('m', true);  // the memo of v1 is forgotten: a new draw
  assert.equal((await r.ledger()).m.randomizations, 3);
  await r.flush(1000);
  assert.equal(t.received.at(-1).designFingerprint, '77');
});
