// HttpTransport: URLs, headers, and how answers map to status codes.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HttpTransport } from '../src/index.js';

function fakeFetch(status, body, seen = []) {
  return async (url, init) => {
    seen.push({ url, init });
    return { ok: status >= 200 && status < 300, status, text: async () => body };
  };
}

test('posts the JSON mapping with the bearer token', async () => {
  const seen = [];
  const t = new HttpTransport({ baseUrl: 'http://h:1/', token: 'tok', fetch: fakeFetch(200, '{"accepted":1}', seen) });
  const r = await t.submitReports([{ metric: 'm' }], 1000);
  assert.equal(r.accepted, 1);
  assert.equal(seen[0].url, 'http://h:1/v1/ReportService/SubmitReports');
  assert.equal(seen[0].init.headers.Authorization, 'Bearer tok');
  assert.deepEqual(JSON.parse(seen[0].init.body), { reports: [{ metric: 'm' }] });
});

test('an error body gives its status; a bare HTTP error maps by status; no answer is UNAVAILABLE', async () => {
  const body = '{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"reports[0].bit: must be 0 or 1"}}';
  await assert.rejects(new HttpTransport({ baseUrl: 'http://h', fetch: fakeFetch(400, body) }).getDesign('m', 100),
    (e) => e.code === 'INVALID_ARGUMENT' && /reports\[0\]\.bit/.test(e.message));
  await assert.rejects(new HttpTransport({ baseUrl: 'http://h', fetch: fakeFetch(502, '<html>') }).getDesign('m', 100),
    (e) => e.code === 'UNAVAILABLE');
  await assert.rejects(new HttpTransport({ baseUrl: 'http://h', fetch: fakeFetch(401, '') }).getDesign('m', 100),
    (e) => e.code === 'UNAUTHENTICATED');
  const down = async () => { throw new TypeError('fetch failed'); };
  await assert.rejects(new HttpTransport({ baseUrl: 'http://h', fetch: down }).getDesign('m', 100),
    (e) => e.code === 'UNAVAILABLE');
  const slow = (url, init) => new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(new Error('aborted'))));
  await assert.rejects(new HttpTransport({ baseUrl: 'http://h', fetch: slow }).getDesign('m', 20),
    (e) => e.code === 'DEADLINE_EXCEEDED');
});
