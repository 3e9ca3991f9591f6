// Report and drain rates of the JS SDK per store against an in-process collector that accepts
// everything: node client/js/bench/store_bench.mjs (figures in docs/sdk.md).
import { FileStore, MemoryStore, Reporter } from '../src/node.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const transport = { async getDesign(m) { return { design: { version: 1, a: 0.73, b: 0.27 }, timePrecisionSeconds: 3600 }; }, async submitReports(r) { return { accepted: r.length }; } };
for (const [name, mk, n] of [['memory', () => new MemoryStore(), 20000], ['file sync', (d) => new FileStore({ path: join(d, 'a.json') }), 300], ['file nosync', (d) => new FileStore({ path: join(d, 'b.json'), sync: false }), 1000]]) {
  const dir = mkdtempSync(join(tmpdir(), 'fsb-'));
  const r = new Reporter({ transport, store: mk(dir), backgroundSending: false, onePerPeriod: false });
  let t = performance.now();
  for (let i = 0; i < n; i++) await r.report('m', i % 2 === 0);
  const rep = n / ((performance.now() - t) / 1000);
  t = performance.now();
  await r.flush();
  const drain = n / ((performance.now() - t) / 1000);
  console.log(`${name}: ${n} reports, report() ${rep.toFixed(0)}/s, drain ${drain.toFixed(0)}/s`);
}
