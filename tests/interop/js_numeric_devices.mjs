// Node devices of a numeric metric, for tests/interop/sdk_numeric_test.py:
//   node js_numeric_devices.mjs BASE_URL METRIC VALUES
// VALUES: the devices' true values, comma-separated. Each device (one Reporter, in-memory store,
// crypto.getRandomValues) reports its value with reportValue; a transport wrapped around
// HttpTransport keeps every report as sent, and one JSON line gives what they add to the
// collector's counters: the number of reports and of bits 1 (ONE_BIT_MEAN), or per bucket the
// reports that sampled it and their bits 1 (D_BIT_FLIP), for the harness to compare with the
// server's.
import assert from 'node:assert/strict';

import { HttpTransport, MemoryStore, Reporter, numericDesignFromWire } from '../../client/js/src/node.js';

const [baseUrl, metric, valuesArg] = process.argv.slice(2);
const values = valuesArg.split(',').map(Number);

class Recording {
  constructor() {
    this.http = new HttpTransport({ baseUrl });
    this.sent = [];
  }

  getDesign(m, timeoutMs) { return this.http.getDesign(m, timeoutMs); }

  submitReports(reports, timeoutMs) {
    this.sent.push(...structuredClone(reports));
    return this.http.submitReports(reports, timeoutMs);
  }
}

const transport = new Recording();
const served = await transport.getDesign(metric, 10000);
const design = numericDesignFromWire(served.design, served.range);
let clipped = 0;
for (const value of values) {
  const r = new Reporter({ transport, store: new MemoryStore(), backgroundSending: false,
    labels: { lang: 'node' } });
  assert.ok(await r.reportValue(metric, value));
  await r.flush(10000);
  assert.equal((await r.ledger())[metric].reportsAcknowledged, 1);
  clipped += (await r.stats()).valuesClipped;
}
assert.equal(transport.sent.length, values.length);
const sampled = new Array(design.k).fill(0);
const ones = new Array(design.k).fill(0);
for (const x of transport.sent) {
  if (design.mechanism === 'ONE_BIT_MEAN') {
    assert.equal(x.numeric, undefined);
    continue;
  }
  assert.equal(x.bit, 0);
  assert.equal(x.numeric.buckets.length, design.d);
  x.numeric.buckets.forEach((j, i) => {
    sampled[j] += 1;
    if (x.numeric.bits[i]) ones[j] += 1;
  });
}
console.log(JSON.stringify({
  mechanism: design.mechanism, devices: transport.sent.length, clipped,
  ones: transport.sent.reduce((s, x) => s + x.bit, 0), sampled, bucketOnes: ones,
}));
