// The delivery contract's shared table, tests/conformance/delivery_contract.json, run through the
// JS Reporter (node --test): for each case a scripted collector answers the SubmitReports calls
// as the collector's HTTP/JSON gateway does (every scalar printed, server/http/json_print.cc), one flush() is checked
// against the outcome the table expects, then the collector recovers and a second flush() must
// deliver exactly the reports still queued. The C++ SDK (client/src/delivery_conformance_test.cc)
// and the Python SDK (client/python/tests/test_delivery_conformance.py) run the same file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { DeniableError, Reporter, StatusCode } from '../src/node.js';
import { toBase64 } from '../src/http_transport.js';
import { EPS1 } from './fake_transport.js';

const TABLE = new URL('../../../tests/conformance/delivery_contract.json', import.meta.url);
const NOW_MS = Date.UTC(2026, 10, 23, 12);
const MAX_REPORT_AGE_MS = 86400 * 1000;
const COUNTERS = {
  acknowledged: 'acknowledged', duplicates: 'duplicates', dropped_rejected: 'droppedRejected',
  dropped_design_mismatch: 'droppedDesignMismatch', dropped_too_old: 'droppedTooOld',
  dropped_queue_full: 'droppedQueueFull', send_attempts: 'sendAttempts',
  failed_attempts: 'failedAttempts', batch_splits: 'batchSplits',
  kept_after_rejection: 'keptAfterRejection',
};

// A code by its canonical name, or a number (a malformed answer).
const codeNumber = (code) => (typeof code === 'number' ? code : StatusCode[code]);

// Serves metric "m" (version 1); answers SubmitReports with the case's answers, then is
// unreachable (UNAVAILABLE) until recovered, then accepts every report.
class ScriptedCollector {
  constructor(answers) {
    this.script = [...answers];
    this.calls = [];  // report ids per call
    this.designCalls = 0;
    this.recovered = false;
  }

  async getDesign(metric) {
    this.designCalls += 1;
    return { metric, timePrecisionSeconds: 3600, design: { version: 1, a: EPS1.a, b: EPS1.b, epsilon: 1 } };
  }

  async submitReports(reports) {
    this.calls.push(reports.map((r) => r.reportId));
    const answer = this.script.shift();
    if (answer === undefined) {
      if (!this.recovered) throw new DeniableError('UNAVAILABLE', 'unreachable (the script ended)');
      return { accepted: reports.length, duplicates: 0, rejections: [], staleMetrics: [] };
    }
    if (answer.status !== 'OK') {
      // fetch() itself fails with a TypeError when nothing answers: the SDK reads it as UNAVAILABLE.
      if (answer.transport_error && answer.status === 'UNAVAILABLE') throw new TypeError(`fetch failed: ${answer.transport_error}`);
      throw new DeniableError(answer.status, answer.transport_error ?? 'scripted');
    }
    const rejections = (answer.rejections ?? []).map((r) => ({
      index: r.index, code: codeNumber(r.code), reason: `reports[${r.index}]: scripted`, permanent: r.permanent,
    }));
    const duplicates = answer.duplicates ?? 0;
    return {
      accepted: Math.max(0, reports.length - rejections.length - duplicates), duplicates, rejections,
      staleMetrics: answer.stale_metrics ?? [],
    };
  }
}

async function runCase(c) {
  const expect = c.expect;
  const tooOld = c.too_old ?? 0;
  const collector = new ScriptedCollector(c.answers);
  let now = NOW_MS - 2 * MAX_REPORT_AGE_MS;
  const errors = [];
  const r = new Reporter({
    transport: collector, now: () => now, backgroundSending: false, onePerPeriod: false,
    maxBatchReports: c.reports, maxReportAgeMs: MAX_REPORT_AGE_MS, maxAttempts: 1,
    maxQueuedReports: c.max_queued_reports ?? 100000,
    initialBackoffMs: 1, maxBackoffMs: 2,
    log: (level, message) => { if (level === 'error') errors.push(message); },
  });
  try {
    const ids = [];
    for (let i = 0; i < c.reports; i++) {
      if (i === tooOld) now = NOW_MS;
      ids.push(toBase64(await r.report('m', i % 2 === 0)));
    }
    now = NOW_MS;
    const designCalls = collector.designCalls;

    let flushed = 'OK';
    try {
      await r.flush(30000);
    } catch (e) {
      assert.ok(e instanceof DeniableError, String(e));
      flushed = e.code;
    }
    assert.equal(flushed, expect.flush);
    const sizes = collector.calls.map((call) => call.length);
    assert.deepEqual(sizes, expect.batch_sizes);
    assert.equal(await r.pending(), expect.queued.length);
    const stats = await r.stats();
    for (const name of Object.keys(expect.counters)) assert.ok(name in COUNTERS, `no such counter: ${name}`);
    const want = Object.fromEntries(Object.keys(COUNTERS).map((name) => [name, expect.counters[name] ?? 0]));
    const got = Object.fromEntries(Object.entries(COUNTERS).map(([name, js]) => [name, stats[js]]));
    assert.deepEqual(got, want);
    assert.equal(errors.length, expect.errors_logged, errors.join('\n'));

    // next_step, as the calls show it.
    const answers = c.answers.length;
    switch (expect.next_step) {
      case 'retry_with_backoff':
        assert.equal(sizes.length, answers, 'the flush went on after a transient failure');
        assert.ok(expect.queued.length > 0);
        break;
      case 'halve_and_resend':
        assert.equal(sizes.length, answers + 1);
        assert.equal(sizes[answers], Math.floor(sizes[answers - 1] / 2));
        break;
      case 'send_next_batch':
        assert.equal(sizes.length, answers + 1);
        break;
      default:
        assert.equal(expect.next_step, 'done');
        assert.equal(sizes.length, answers);
        assert.deepEqual(expect.queued, []);
    }

    // Recovery: exactly the reports still queued are sent, oldest first, with their ids.
    collector.recovered = true;
    const before = collector.calls.length;
    await r.flush(30000);
    assert.deepEqual(collector.calls.slice(before).flat(), expect.queued.map((i) => ids[i]));
    assert.equal(await r.pending(), 0);
    const after = await r.stats();
    assert.equal(after.acknowledged, want.acknowledged + expect.queued.length);
    assert.equal(after.droppedRejected, want.dropped_rejected);
    assert.equal(after.droppedDesignMismatch, want.dropped_design_mismatch);
    assert.equal(collector.designCalls - designCalls, expect.design_refetched ? 1 : 0);
  } finally {
    await r.close({ drainTimeoutMs: 0 });
  }
}

for (const c of JSON.parse(readFileSync(TABLE, 'utf8')).cases) {
  test(`delivery contract: ${c.name}`, () => runCase(c));
}
