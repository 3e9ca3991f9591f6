// A scripted collector for unit tests: designs per metric, and a queue of scripted answers to
// SubmitReports (an error code, a response, or a function); unscripted calls accept all.
import { DeniableError } from '../src/errors.js';

export const EPS1 = { a: Math.E / (1 + Math.E), b: 1 / (1 + Math.E) };

export class FakeTransport {
  constructor({ randomization = 'MEMOIZED', period = 86400 } = {}) {
    this.randomization = randomization;
    this.period = period;
    this.script = [];
    this.received = [];   // every report of every call, in order
    this.stored = new Set();
    this.calls = 0;
    this.designCalls = 0;
    this.fingerprint = '1';
  }

  async getDesign(metric) {
    this.designCalls += 1;
    if (metric === 'unknown') throw new DeniableError('NOT_FOUND', 'metric: "unknown" does not exist');
    return {
      metric, timePrecisionSeconds: 3600, reportingPeriodSeconds: this.period,
      randomization: this.randomization, designFingerprint: this.fingerprint,
      windowFirstsOff: this.windowFirstsOff ?? false, reportingOnce: this.reportingOnce ?? false,
      design: { version: 1, a: EPS1.a, b: EPS1.b, epsilon: 1 },
    };
  }

  async submitReports(reports) {
    this.calls += 1;
    const step = this.script.shift();
    if (typeof step === 'string') throw new DeniableError(step, `scripted ${step}`);
    if (typeof step === 'function') return step(reports, this);
    return this.accept(reports, step?.rejections ?? []);
  }

  accept(reports, rejections = []) {
    const rejected = new Set(rejections.map((r) => r.index));
    let accepted = 0;
    let duplicates = 0;
    reports.forEach((r, i) => {
      if (rejected.has(i)) return;
      this.received.push(r);
      if (this.stored.has(r.reportId)) duplicates += 1;
      else {
        this.stored.add(r.reportId);
        accepted += 1;
      }
    });
    return { accepted, duplicates, staleMetrics: [], rejections };
  }
}
