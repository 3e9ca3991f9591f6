// Compiled by `npm run typecheck` (tsc --noEmit): the declarations describe a usable API.
import { Reporter, IndexedDbStore, DeniableError, seededRandom, type MetricLedger } from 'deniable-sdk';
import { FileStore } from 'deniable-sdk/node';

async function example(): Promise<number> {
  const reporter = new Reporter({
    baseUrl: 'https://collector.example:8443',
    token: 'reporter-token',
    store: new FileStore({ path: '/tmp/deniable.json' }),
    labels: { app_version: '1.0' },
  });
  const id: Uint8Array | null = await reporter.report('uses_drugs', true);
  const ledger: Record<string, MetricLedger> = await reporter.ledger();
  await reporter.flush(10_000).catch((e: DeniableError) => e.code === 'UNAVAILABLE');
  const vote: Uint8Array | null = await reporter.report('vote', 'U');
  const names: string[] = await reporter.categories('vote');
  const minutes: Uint8Array | null = await reporter.reportValue('minutes_of_use', 42.5);
  const clipped: number = (await reporter.stats()).valuesClipped;
  // Per-report options: labels on every kind of report, a category by its index.
  const byIndex: Uint8Array | null = await reporter.reportCategoryIndex('vote', 2, { labels: { app_version: '4.2' } });
  await reporter.report('uses_drugs', true, { labels: { screen: 'home' } });
  await reporter.reportValue('minutes_of_use', 42.5, { labels: { screen: 'home' } });
  const browser = new Reporter({ baseUrl: 'https://c.example', store: new IndexedDbStore(), random: seededRandom(1) });
  await browser.close({ drainTimeoutMs: 0 });
  return (id?.length ?? 0) + (vote?.length ?? 0) + (byIndex?.length ?? 0) + (minutes?.length ?? 0) + clipped + names.length +
    ledger['uses_drugs'].epsilonSpent;
}
void example;

// The query client: typed answers, nulls where the server has no value.
import { QueryClient, changeWords, type Prevalence, type Difference, type NumericEstimate, type IntervalKind } from 'deniable-sdk';
async function analyst(): Promise<string> {
  const q = new QueryClient({ baseUrl: 'http://127.0.0.1:8080', token: 'analyst' });
  const p: Prevalence = await q.getPrevalence({ metric: 'uses_drugs', method: 'WILSON', start: '-7d' });
  const s = await q.getSeries({ metric: 'uses_drugs', start: new Date(0), bucket: 'WEEK' });
  const shown: (number | null)[] = s.buckets.map((b) => (b.suppressed ? null : b.estimateUnbiased));
  const groups: Prevalence[] = await q.getBreakdown({ metric: 'uses_drugs', groupBy: 'region' });
  const d: Difference = await q.getDifference({ metric: 'uses_drugs', first: ['-14d', '-7d'], second: ['-7d', undefined] });
  const minutes: NumericEstimate | undefined = (await q.getPrevalence({ metric: 'minutes', quantiles: [0.5] })).numeric;
  const median: number | null = minutes?.quantiles?.[0]?.value ?? null;
  const of: string = minutes?.estimand ?? '';  // "period_distribution", a number's words
  // Anytime-valid intervals (issue 41): asked for, and read back per answer and bucket.
  const live: Prevalence = await q.getPrevalence({ metric: 'uses_drugs', start: '-1h', interval: 'ANYTIME', anytimeTunedReports: 5000 });
  const kinds: (IntervalKind | null)[] = (await q.getSeries({ metric: 'uses_drugs', interval: 'anytime' })).buckets.map((b) => b.intervalKind);
  return `${p.n} ${shown.length} ${groups.length} ${d.change ?? 0} ${d.changeText} ${changeWords(d.change)} ${median} ${of} ${live.intervalKind} ${kinds.length}`;
}
void analyst;

// Heavy hitters: strings on the device, top values and frequencies for the analyst.
import { type TopValues } from 'deniable-sdk';
async function strings(reporter: Reporter, q: QueryClient): Promise<number> {
  const id: Uint8Array | null = await reporter.reportString('app', 'firefox', { labels: { screen: 'home' } });
  await reporter.reportString('app', new Uint8Array([0x61]));
  const top: TopValues = await q.getTopValues({ metric: 'app', start: '-7d', maxPrefixes: 32 });
  const texts: (string | null)[] = top.values.map((v) => v.text);
  const f: TopValues = await q.getFrequencies({ metric: 'app', values: ['firefox', new Uint8Array([0x61])], estimationGroupOnly: true });
  return (id?.length ?? 0) + texts.length + f.values[0].share;
}
void strings;
