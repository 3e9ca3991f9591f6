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

// Real sockets (issue 38): the server down, http:// against an HTTPS listener and an untrusted
// certificate each say their own cause, keeping fetch's cause code; NODE_EXTRA_CA_CERTS, as the
// message says, makes the private CA trusted.
test('no HTTP answer names its cause: refused, TLS listener over http://, untrusted CA', async () => {
  const { execFileSync } = await import('node:child_process');
  const fs = await import('node:fs');
  const https = await import('node:https');
  const net = await import('node:net');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deniable-js-tls-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key,
    '-out', cert], { stdio: 'ignore' });
  const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) },
    (req, res) => res.end('{"design":{}}'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  const closed = net.createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  try {
    const design = (baseUrl) => new HttpTransport({ baseUrl }).getDesign('m', 5000);
    await assert.rejects(design(`http://127.0.0.1:${closedPort}`), (e) => e.code === 'UNAVAILABLE' &&
      e.message.includes(`GetDesign: nothing listens at http://127.0.0.1:${closedPort} (ECONNREFUSED: connect ECONNREFUSED`) &&
      !e.message.includes('baseUrl must be'));
    await assert.rejects(design(`http://127.0.0.1:${port}`), (e) => e.code === 'UNAVAILABLE' &&
      e.message.includes(`http://127.0.0.1:${port} closed the connection without an HTTP answer (UND_ERR_SOCKET`) &&
      e.message.includes('use https://'));
    await assert.rejects(design(`https://127.0.0.1:${port}`), (e) => e.code === 'UNAVAILABLE' &&
      e.message.includes(`the TLS certificate of https://127.0.0.1:${port} is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT`) &&
      e.message.includes('NODE_EXTRA_CA_CERTS=/path/to/ca.pem'));
    const child = (await import('node:child_process')).spawn(process.execPath, ['--input-type=module', '-e',
      `const r = await fetch('https://127.0.0.1:${port}/v1/ReportService/GetDesign', { method: 'POST', body: '{}' });
       process.stdout.write(await r.text());`], { env: { ...process.env, NODE_EXTRA_CA_CERTS: cert } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0);
    assert.equal(out, '{"design":{}}');
  } finally {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
