// Test page of the browser SDK. Phases:
//   queue:    `devices` devices (one IndexedDB database each) report one answer, nothing sent
//   send:     after a reload: the same devices find their report queued and flush it
//   simulate: `devices` devices with in-memory stores report and flush (the interop matrix)
//   categorical: `devices` devices (in-memory stores, crypto.getRandomValues) of a metric with
//             categories report category i % k by name and flush; the result has the support
//             counts of the reports as sent (the collector's rule)
//   numeric:  `devices` devices (one IndexedDB database each, crypto.getRandomValues) of a numeric
//             metric report device i's value lo + (hi - lo) ((37 i) mod 101) / 100 with
//             reportValue and flush; the result has what the reports as sent add to the
//             collector's counters (bits 1; per bucket, the reports that sampled it and their 1s)
// Device i's true answer is "yes" for i < devices * share; randomness seeded per device (a test
// page; the SDK's default is crypto.getRandomValues).
import {
  HttpTransport, IndexedDbStore, MemoryStore, Reporter, categoricalDesignFromWire,
  numericDesignFromWire, seededRandom, supports,
} from '../src/index.js';

const q = new URLSearchParams(location.search);
const collector = q.get('collector');
const metric = q.get('metric');
const phase = q.get('phase');
const devices = Number(q.get('devices') ?? 10);
const seed = Number(q.get('seed') ?? 1);
const share = Number(q.get('share') ?? 0.3);
const out = document.getElementById('result');

function device(i, store) {
  return new Reporter({
    baseUrl: collector, store, backgroundSending: false, random: seededRandom(seed + i),
    labels: { lang: 'browser' },
  });
}

async function categorical() {
  const http = new HttpTransport({ baseUrl: collector });
  const sent = [];
  const transport = {
    getDesign: (m, t) => http.getDesign(m, t),
    submitReports: (reports, t) => { sent.push(...structuredClone(reports)); return http.submitReports(reports, t); },
  };
  const served = await http.getDesign(metric, 10000);
  const design = categoricalDesignFromWire(served.design, served.categories);
  let acknowledged = 0;
  for (let i = 0; i < devices; i++) {
    const r = new Reporter({ transport, store: new MemoryStore(), backgroundSending: false, labels: { lang: 'browser' } });
    await r.report(metric, served.categories[i % served.categories.length]);
    await r.flush(20000);
    acknowledged += (await r.ledger())[metric].reportsAcknowledged;
  }
  const support = served.categories.map((_, v) => sent.filter((x) => supports(design, x.categorical, v)).length);
  return { phase, devices, acknowledged, mechanism: design.mechanism, support };
}

async function numeric() {
  const http = new HttpTransport({ baseUrl: collector });
  const sent = [];
  const transport = {
    getDesign: (m, t) => http.getDesign(m, t),
    submitReports: (reports, t) => { sent.push(...structuredClone(reports)); return http.submitReports(reports, t); },
  };
  const served = await http.getDesign(metric, 10000);
  const design = numericDesignFromWire(served.design, served.range);
  let acknowledged = 0;
  for (let i = 0; i < devices; i++) {
    const store = new IndexedDbStore({ name: `numeric-${metric}-${seed}-${i}` });
    const r = new Reporter({ transport, store, backgroundSending: false, labels: { lang: 'browser' } });
    await r.reportValue(metric, design.lo + (design.hi - design.lo) * ((37 * i) % 101) / 100);
    await r.flush(20000);
    acknowledged += (await r.ledger())[metric].reportsAcknowledged;
    await r.close({ drainTimeoutMs: 0 });
  }
  const sampled = new Array(design.k).fill(0);
  const bucketOnes = new Array(design.k).fill(0);
  for (const x of sent) {
    (x.numeric?.buckets ?? []).forEach((j, n) => {
      sampled[j] += 1;
      if (x.numeric.bits[n]) bucketOnes[j] += 1;
    });
  }
  const ones = sent.reduce((s, x) => s + x.bit, 0);
  return { phase, devices, acknowledged, mechanism: design.mechanism, ones, sampled, bucketOnes };
}

async function run() {
  if (phase === 'categorical') return categorical();
  if (phase === 'numeric') return numeric();
  const result = { phase, devices, pending: 0, acknowledged: 0, ids: 0, repeated: 0 };
  for (let i = 0; i < devices; i++) {
    const truth = i < devices * share;
    if (phase === 'queue') {
      const r = device(i, new IndexedDbStore({ name: `device-${i}` }));
      if (await r.report(metric, truth)) result.ids += 1;
      if ((await r.report(metric, !truth)) === null) result.repeated += 1;  // one per period
      result.pending += await r.pending();
      await r.close({ drainTimeoutMs: 0 });
    } else if (phase === 'send') {
      const r = device(i, new IndexedDbStore({ name: `device-${i}` }));
      result.pending += await r.pending();
      await r.flush(20000);
      result.acknowledged += (await r.ledger())[metric].reportsAcknowledged;
      await r.close({ drainTimeoutMs: 0 });
    } else if (phase === 'simulate') {
      const r = device(i, new MemoryStore());
      if (await r.report(metric, truth)) result.ids += 1;
      await r.flush(20000);
      result.acknowledged += (await r.ledger())[metric].reportsAcknowledged;
    } else {
      throw new Error(`phase: unknown "${phase}"`);
    }
  }
  return result;
}

run().then(
  (result) => { out.textContent = JSON.stringify(result); document.title = 'done'; },
  (error) => { out.textContent = JSON.stringify({ error: String(error && error.message) }); document.title = 'failed'; },
);
