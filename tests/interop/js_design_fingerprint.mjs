// A Node device (FileStore) for tests/interop/js_design_fingerprint_test.py, in two phases
// around the operator recreating the collector's database:
//   node js_design_fingerprint.mjs BASE_URL METRIC STORE_FILE before|after
// before: one report delivered (carrying the collector's designFingerprint), then a "yes" (the
//   memoized bit) and a "no" queued; closed without sending them.
// after: flush fails FAILED_PRECONDITION: both dropped as design mismatches, not re-randomized;
//   the design is fetched again and the next report is a new draw, delivered.
// Prints one JSON line with what it saw.
import assert from 'node:assert/strict';

import { FileStore, Reporter } from '../../client/js/src/node.js';

const [baseUrl, metric, path, phase] = process.argv.slice(2);
const logs = [];
const r = new Reporter({ baseUrl, store: new FileStore({ path }), backgroundSending: false,
  onePerPeriod: false, initialBackoffMs: 10, maxBackoffMs: 50,
  log: (level, message) => logs.push([level, message]) });
if (phase === 'before') {
  await r.report(metric, true);
  await r.flush(10000);
  await r.report(metric, true);
  await r.report(metric, false);
  assert.equal(await r.pending(), 2);
  assert.equal((await r.ledger())[metric].randomizations, 2);
  await r.close({ drainTimeoutMs: 0 });
  console.log(JSON.stringify({ phase, stats: await r.stats() }));
} else {
  await assert.rejects(r.flush(20000), (e) => e.code === 'FAILED_PRECONDITION' &&
    /dropped 2 reports/.test(e.message) && /design_fingerprint/.test(e.message));
  const stats = await r.stats();
  assert.deepEqual([stats.droppedDesignMismatch, stats.droppedRejected, stats.queued], [2, 0, 0]);
  assert.equal((await r.ledger())[metric].randomizations, 2, 'a dropped report was randomized again');
  assert.ok(logs.some(([level, m]) => level === 'error' && /dropped 2 reports/.test(m)), JSON.stringify(logs));
  await r.report(metric, true);  // the memo of v1 was forgotten: a new draw with the new design
  const ledger = (await r.ledger())[metric];
  assert.equal(ledger.randomizations, 3);
  assert.ok(Math.abs(ledger.epsilonSpent - (2 * Math.log(3) + 0.5)) < 1e-9, JSON.stringify(ledger));
  await r.flush(10000);
  await r.close({ drainTimeoutMs: 0 });
  console.log(JSON.stringify({ phase, stats: await r.stats(), ledger }));
}
