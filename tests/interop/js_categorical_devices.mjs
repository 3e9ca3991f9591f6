// Node devices of a metric with categories, for tests/interop/js_categorical_test.py:
//   node js_categorical_devices.mjs BASE_URL METRIC COUNTS WORK_DIR
// COUNTS: how many devices answer each category, in the metric's order ("160,100,80,40,20").
// Each device (one Reporter, in-memory store, crypto.getRandomValues) reports its true category
// by name; a transport wrapped around HttpTransport keeps every report as sent, and the support
// counts of those reports (the collector's rule, categorical.js supports) are printed as one JSON
// line for the harness to compare with the server's. Then one device with a FileStore reports
// the same category on two days: the same randomized report twice, one randomization.
import assert from 'node:assert/strict';
import { join } from 'node:path';

import {
  FileStore, HttpTransport, MemoryStore, Reporter, categoricalDesignFromWire, supports,
} from '../../client/js/src/node.js';

const [baseUrl, metric, countsArg, work] = process.argv.slice(2);
const counts = countsArg.split(',').map(Number);

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
const design = categoricalDesignFromWire(served.design, served.categories);
assert.equal(served.categories.length, counts.length);
let device = 0;
for (const [v, count] of counts.entries()) {
  for (let i = 0; i < count; i++, device++) {
    const r = new Reporter({ transport, store: new MemoryStore(), backgroundSending: false,
      labels: { lang: 'node' } });
    assert.ok(await r.report(metric, served.categories[v]));
    await r.flush(10000);
    assert.equal((await r.ledger())[metric].reportsAcknowledged, 1);
  }
}
assert.equal(transport.sent.length, device);
assert.ok(transport.sent.every((x) => x.bit === 0 && x.categorical));
const support = served.categories.map((_, v) => transport.sent.filter((x) => supports(design, x.categorical, v)).length);

// One device on two days, with its device file.
const path = join(work, `${metric}-device.json`);
let now = Date.now() - 86400 * 1000;
const first = transport.sent.length;
for (let day = 0; day < 2; day++) {
  const r = new Reporter({ transport, store: new FileStore({ path }), backgroundSending: false,
    now: () => now, labels: { lang: 'node_file' } });
  assert.ok(await r.report(metric, served.categories[2]));
  await r.flush(10000);
  if (day === 1) {
    const l = (await r.ledger())[metric];
    assert.equal(l.reportsAccepted, 2);
    assert.equal(l.randomizations, 1);
  }
  await r.close({ drainTimeoutMs: 0 });
  now += 86400 * 1000;
}
const [a, b] = transport.sent.slice(first);
assert.deepEqual(a.categorical, b.categorical);
assert.notEqual(a.reportId, b.reportId);
console.log(JSON.stringify({ metric, mechanism: design.mechanism, devices: device, support }));
