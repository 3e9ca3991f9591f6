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
  const browser = new Reporter({ baseUrl: 'https://c.example', store: new IndexedDbStore(), random: seededRandom(1) });
  await browser.close({ drainTimeoutMs: 0 });
  return (id?.length ?? 0) + (vote?.length ?? 0) + names.length + ledger['uses_drugs'].epsilonSpent;
}
void example;
