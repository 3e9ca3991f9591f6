// Node devices for the interop matrix and the Node end-to-end test (tests/interop/*.py):
//   node js_devices.mjs BASE_URL METRIC DEVICES SEED SHARE WORK_DIR
// 1. One device with a FileStore: report, the second report of the period queues nothing,
//    close (drain) delivers; a restart finds the period's report done.
// 2. A device whose reports the collector rejects for good (an invalid label): dropped,
//    counted, flush says so.
// 3. DEVICES devices (in-memory stores, seeded): device i answers "yes" when i < DEVICES*SHARE.
// Prints one JSON line with what it saw; the Python harness checks the server's counts.
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { FileStore, MemoryStore, Reporter, seededRandom } from '../../client/js/src/node.js';

const [baseUrl, metric, devicesArg, seedArg, shareArg, work] = process.argv.slice(2);
const devices = Number(devicesArg);
const seed = Number(seedArg);
const share = Number(shareArg);

const path = join(work, 'node-device.json');
let r = new Reporter({ baseUrl, store: new FileStore({ path }), labels: { lang: 'node_file' } });
const id = await r.report(metric, true);
assert.equal(id.length, 16);
assert.equal(await r.report(metric, false), null);
await r.close({ drainTimeoutMs: 10000 });
r = new Reporter({ baseUrl, store: new FileStore({ path }), backgroundSending: false });
assert.equal(await r.pending(), 0);
assert.equal(await r.report(metric, true), null);
const fileLedger = (await r.ledger())[metric];
assert.equal(fileLedger.reportsAccepted, 1);
assert.equal(fileLedger.reportsAcknowledged, 1);
assert.equal(fileLedger.reportsRepeatedInPeriod, 2);
await r.close({ drainTimeoutMs: 0 });

const logs = [];
const bad = new Reporter({ baseUrl, backgroundSending: false, labels: { 'Bad Key': 'x' },
  log: (level, message) => logs.push([level, message]) });
await bad.report(metric, true);
await assert.rejects(bad.flush(10000), (e) => e.code === 'INVALID_ARGUMENT' && /dropped/.test(e.message) && /labels/.test(e.message));
const badStats = await bad.stats();
assert.equal(badStats.droppedRejected, 1);
assert.equal(badStats.queued, 0);
assert.ok(logs.some(([level, m]) => level === 'error' && /dropped 1 report/.test(m)));

let acknowledged = 0;
for (let i = 0; i < devices; i++) {
  const d = new Reporter({ baseUrl, store: new MemoryStore(), backgroundSending: false,
    random: seededRandom(seed + i), labels: { lang: 'node' } });
  await d.report(metric, i < devices * share);
  await d.flush(10000);
  acknowledged += (await d.ledger())[metric].reportsAcknowledged;
}
console.log(JSON.stringify({ file_device: 1, rejected_dropped: 1, devices, acknowledged }));
