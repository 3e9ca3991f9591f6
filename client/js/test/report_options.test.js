// The per-report options (labels, category by name or by index, a numeric value) against the
// shared table tests/conformance/report_options.json, which every SDK runs (docs/sdk.md
// "Per-report options"), node --test: each case on a fresh seeded reporter over a fake collector
// serving the table's metrics; its error (code and words of the message), or the one report sent
// (kind of answer, labels, and for a category by index the very report the call by name makes
// with the same seed).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import {
  DeniableError, Reporter, makeNumericDesign, numericChannel, numericLocalEpsilon, seededRandom,
  supportChannel,
} from '../src/node.js';

const TABLE = JSON.parse(readFileSync(new URL('../../../tests/conformance/report_options.json', import.meta.url)));
const T0 = Date.UTC(2026, 10, 23, 12);

function served(metric, m) {
  const d = m.design;
  const common = { metric, timePrecisionSeconds: 3600, reportingPeriodSeconds: 86400, randomization: 'MEMOIZED' };
  if (m.kind === 'yes_no') return { ...common, design: { version: 1, a: d.a, b: d.b, epsilon: d.epsilon } };
  if (m.kind === 'categorical') {
    const k = m.categories.length;
    const { pStar, qStar, g } = supportChannel(d.mechanism, k, d.epsilon);
    return {
      ...common, categories: m.categories,
      design: {
        parameters: { categorical: { mechanism: d.mechanism, epsilon: d.epsilon } }, version: 1, a: pStar,
        b: qStar, epsilon: d.epsilon, epsilonInfinite: false, categories: k, hashBuckets: g,
      },
    };
  }
  const sampled = d.sampled_buckets ?? 0;
  const nd = makeNumericDesign(d.mechanism, d.epsilon, d.edges, sampled);
  const { a, b } = numericChannel(nd);
  const numeric = { mechanism: d.mechanism, epsilon: d.epsilon, bucketEdges: d.edges, buckets: d.edges.length - 1, unit: m.unit };
  if (sampled) numeric.sampledBuckets = sampled;
  return {
    ...common, range: { lo: d.edges[0], hi: d.edges[d.edges.length - 1], unit: m.unit },
    design: { version: 1, epsilon: numericLocalEpsilon(nd), a, b, parameters: { numeric } },
  };
}

class TableCollector {
  constructor() {
    this.designs = Object.fromEntries(Object.entries(TABLE.metrics).map(([name, m]) => [name, served(name, m)]));
    this.received = [];
  }

  async getDesign(metric) {
    return structuredClone(this.designs[metric]);
  }

  async submitReports(reports) {
    this.received.push(...structuredClone(reports));
    return { accepted: reports.length, duplicates: 0, staleMetrics: [], rejections: [] };
  }
}

// {error, sent} of one call on a fresh reporter seeded with `seed`.
async function run(metric, call, seed = 11) {
  const transport = new TableCollector();
  const reporter = new Reporter({
    transport, now: () => T0, random: seededRandom(seed), backgroundSending: false, labels: TABLE.reporter_labels,
  });
  const options = 'labels' in call ? [{ labels: call.labels }] : [];
  let error = null;
  try {
    if ('bool' in call) await reporter.report(metric, call.bool, ...options);
    else if ('category' in call) await reporter.report(metric, call.category, ...options);
    else if ('category_index' in call) await reporter.reportCategoryIndex(metric, call.category_index, ...options);
    else await reporter.reportValue(metric, call.value === 'NaN' ? NaN : call.value, ...options);
  } catch (e) {
    error = e;
  }
  await reporter.flush(10000);
  await reporter.close({ drainTimeoutMs: 0 });
  return { error, sent: transport.received };
}

const wireKind = (r) => (r.categorical ? 'categorical' : r.numeric ? 'numeric' : 'bit');

for (const c of TABLE.cases) {
  test(`report options: ${c.name}`, async () => {
    const { error, sent } = await run(c.metric, c.call);
    const expect = c.expect;
    if (expect.code) {
      assert.ok(error instanceof DeniableError, String(error));
      assert.equal(error.code, expect.code, error.message);
      for (const word of expect.message_has) assert.ok(error.message.includes(word), `${error.message} lacks ${word}`);
      for (const word of expect.message_lacks ?? []) assert.ok(!error.message.includes(word), `${error.message} repeats ${word}`);
      assert.deepEqual(sent, []);
      return;
    }
    assert.equal(error, null);
    assert.equal(sent.length, 1);
    assert.equal(sent[0].metric, c.metric);
    assert.equal(wireKind(sent[0]), expect.wire);
    assert.deepEqual(sent[0].labels, expect.labels);
    if (expect.same_as) {
      const byName = await run(c.metric, expect.same_as);
      assert.equal(byName.error, null);
      assert.deepEqual(sent, byName.sent);
    }
  });
}

test('report options: the table has every kind of call', () => {
  const kinds = new Set(TABLE.cases.map((c) => Object.keys(c.call).find((k) => k !== 'labels')));
  assert.deepEqual([...kinds].sort(), ['bool', 'category', 'category_index', 'value']);
});

test('report options: same_as compares reports drawn with the same seed only', async () => {
  const a = await run('vote', { category: 'U' }, 11);
  const b = await run('vote', { category: 'U' }, 12);
  assert.notEqual(a.sent[0].reportId, b.sent[0].reportId);
});

test('report options: an index that is not an integer is refused', async () => {
  for (const index of [1.5, '1', true]) {
    const { error, sent } = await run('vote', { category_index: index });
    assert.equal(error.code, 'INVALID_ARGUMENT');
    assert.match(error.message, /category: index/);
    assert.deepEqual(sent, []);
  }
});
