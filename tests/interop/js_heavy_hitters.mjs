// Node devices of a heavy-hitters metric and the JS QueryClient, for
// tests/interop/js_heavy_hitters_test.py:
//   node js_heavy_hitters.mjs BASE_URL METRIC VALUES
// VALUES: the devices' true values, comma-separated. Each device (one Reporter, in-memory store,
// seeded so the run is repeatable) reports its value with reportString over HTTP; a transport
// wrapped around HttpTransport keeps every report as sent. Then getTopValues and getFrequencies
// (the distinct values and "zz", from the estimation group). One JSON line: the reports' groups,
// and both answers.
import assert from 'node:assert/strict';

import { HttpTransport, MemoryStore, QueryClient, Reporter, seededRandom } from '../../client/js/src/node.js';

const [baseUrl, metric, valuesArg] = process.argv.slice(2);
const values = valuesArg.split(',');

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
for (const [i, value] of values.entries()) {
  const r = new Reporter({ transport, store: new MemoryStore(), backgroundSending: false, random: seededRandom(i) });
  assert.ok(await r.reportString(metric, value));
  await r.flush(10000);
  assert.equal((await r.ledger())[metric].reportsAcknowledged, 1);
}
const q = new QueryClient({ baseUrl });
const top = await q.getTopValues({ metric });
const candidates = [...new Set(values)].sort().concat(['zz']);
const frequencies = await q.getFrequencies({ metric, values: candidates, estimationGroupOnly: true });
const strip = (t) => ({ ...t, values: t.values.map(({ valueBytes, ...v }) => ({ ...v, bytes: valueBytes.length })) });
console.log(JSON.stringify({
  devices: transport.sent.length,
  groups: transport.sent.map((x) => x.heavyHitters.group),
  top: strip(top),
  frequencies: strip(frequencies),
}));
