// QueryClient: requests in the JSON mapping, the change as second minus first, time arguments,
// and the hint when nothing answers HTTP at baseUrl.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { QueryClient, HttpTransport, changeWords } from '../src/index.js';

function fakeFetch(answer, seen = []) {
  return async (url, init) => {
    seen.push({ url, body: JSON.parse(init.body), headers: init.headers });
    return { ok: true, status: 200, text: async () => JSON.stringify(answer) };
  };
}

const NOW_MS = 1795435200 * 1000;  // 2026-11-23 12:00 UTC

test('getDifference states the change as second minus first, per category too', async () => {
  const seen = [];
  const q = new QueryClient({
    baseUrl: 'http://h:8080/', token: 'analyst', now: () => NOW_MS,
    fetch: fakeFetch({
      difference: 0.0166, standardError: 0.0133, ciLower: -0.0095, ciUpper: 0.0427,
      confidenceLevel: 0.95, shares: [{ category: 'Y', difference: -0.0123, ciLower: -0.08, ciUpper: 0.05 }],
    }, seen),
  });
  const d = await q.getDifference({ metric: 'm', first: ['-14d', '-7d'], second: ['-7d', undefined] });
  assert.equal(d.change, -0.0166);
  assert.deepEqual([d.changeCiLower, d.changeCiUpper], [-0.0427, 0.0095]);
  assert.equal(d.changeText, 'fell by 1.66 points');
  assert.equal(d.difference, 0.0166);  // the wire's first - second, kept
  assert.equal(d.shares[0].changeText, 'rose by 1.23 points');
  assert.equal(seen[0].url, 'http://h:8080/v1/QueryService/GetDifference');
  assert.equal(seen[0].headers.Authorization, 'Bearer analyst');
  const t = NOW_MS / 1000;
  assert.deepEqual(seen[0].body, {
    first: { metric: 'm', startTimeSeconds: t - 14 * 86400, endTimeSeconds: t - 7 * 86400 },
    second: { metric: 'm', startTimeSeconds: t - 7 * 86400 },
  });
});

test('a categorical difference has null yes/no figures and no change', async () => {
  const q = new QueryClient({ baseUrl: 'http://h', fetch: fakeFetch({ difference: null, ciLower: null, ciUpper: null, shares: [] }) });
  const d = await q.getDifference({ metric: 'vote', first: [0, 10], second: [10, 20] });
  assert.equal(d.change, null);
  assert.equal(d.changeText, 'unknown');
});

test('getSeries defaults to the last 30 days in days; times may be Dates', async () => {
  const seen = [];
  const q = new QueryClient({ baseUrl: 'http://h', now: () => NOW_MS, fetch: fakeFetch({ buckets: [] }, seen) });
  await q.getSeries({ metric: 'm' });
  const t = NOW_MS / 1000;
  assert.deepEqual(seen[0].body, { metric: 'm', startTimeSeconds: t - 30 * 86400, endTimeSeconds: t, bucket: 'DAY' });
  await q.getPrevalence({ metric: 'm', start: new Date(1000 * 3600), method: 'WILSON', groupBy: 'region' });
  assert.deepEqual(seen[1].body, { metric: 'm', method: 'WILSON', startTimeSeconds: 3600, groupBy: 'region' });
  await assert.rejects(q.getPrevalence({ metric: 'm', start: 'yesterday' }),
    (e) => e.code === 'INVALID_ARGUMENT' && /start: must be a Date/.test(e.message));
  assert.throws(() => new QueryClient({ baseUrl: '127.0.0.1:50051' }),
    (e) => e.code === 'INVALID_ARGUMENT' && /HTTP listener/.test(e.message));
});

test('no HTTP answer names --http_listen and the gRPC port', async () => {
  const refused = async () => { throw new TypeError('fetch failed'); };
  await assert.rejects(new QueryClient({ baseUrl: 'http://127.0.0.1:50051', fetch: refused }).getPrevalence({ metric: 'm' }),
    (e) => e.code === 'UNAVAILABLE' && /GetPrevalence: fetch failed/.test(e.message) && /--http_listen/.test(e.message));
  await assert.rejects(new HttpTransport({ baseUrl: 'http://127.0.0.1:50051', fetch: refused }).getDesign('m', 100),
    (e) => e.code === 'UNAVAILABLE' && /GetDesign: fetch failed/.test(e.message) && /gRPC port/.test(e.message));
});

test('changeWords', () => {
  assert.equal(changeWords(0.0166), 'rose by 1.66 points');
  assert.equal(changeWords(-0.00001), 'unchanged (0.00 points)');
  assert.equal(changeWords(null), 'unknown');
});

test('getPrevalence sends the quantile levels of a numeric metric and returns its numeric', async () => {
  const seen = [];
  const served = { metric: 'minutes', n: 900, estimand: 'period_prevalence', numeric: { mechanism: 'd_bit_flip', estimand: 'period_distribution', mean: null, devices: 900, quantiles: [{ level: 0.5, value: 250, ciLower: 200, ciUpper: 310 }] } };
  const q = new QueryClient({ baseUrl: 'http://h', fetch: fakeFetch(served, seen) });
  const p = await q.getPrevalence({ metric: 'minutes', quantiles: [0.5] });
  assert.deepEqual(seen[0].body, { metric: 'minutes', quantiles: [0.5] });
  assert.equal(p.numeric.mean, null);
  assert.equal(p.numeric.quantiles[0].value, 250);
  assert.equal(p.numeric.estimand, 'period_distribution');  // the yes/no estimand stays beside it
  assert.equal(p.estimand, 'period_prevalence');
});

test('interval ANYTIME reaches GetPrevalence and GetSeries; an unknown kind names the field', async () => {
  const seen = [];
  const q = new QueryClient({
    baseUrl: 'http://h', now: () => NOW_MS,
    fetch: fakeFetch({ n: 300, ciLower: 0.2, ciUpper: 0.6, intervalKind: 'ANYTIME', anytimeTunedReports: 5000 }, seen),
  });
  const p = await q.getPrevalence({ metric: 'm', start: 86400, end: 2 * 86400, interval: 'ANYTIME', anytimeTunedReports: 5000 });
  assert.equal(p.intervalKind, 'ANYTIME');
  assert.deepEqual(seen[0].body, {
    metric: 'm', interval: 'ANYTIME', anytimeTunedReports: 5000, startTimeSeconds: 86400, endTimeSeconds: 2 * 86400,
  });
  await q.getSeries({ metric: 'm', start: 86400, end: 2 * 86400, interval: 'anytime' });
  assert.equal(seen[1].body.interval, 'ANYTIME');
  await q.getPrevalence({ metric: 'm', interval: 'fixed' });
  assert.equal(seen[2].body.interval, 'FIXED_N');
  await assert.rejects(q.getPrevalence({ metric: 'm', interval: 'sometimes' }),
    (e) => e.code === 'INVALID_ARGUMENT' && /^interval: must be 'FIXED_N' or 'ANYTIME'/.test(e.detail ?? e.message));
  assert.equal(seen.length, 3);
});
