// Reporter: answer yes/no metrics (or metrics with categories) on the device, send only
// randomized reports. The contract is the C++ Reporter's (docs/sdk.md); index.d.ts documents
// each method.
import { categoricalDesignFromWire, drawsFrom, randomizeCategory } from './categorical.js';
import { DeniableError, isPermanentBatchError, rejectionCode } from './errors.js';
import {
  drawGroup, heavyHittersDesignFromWire, hmacSha256, randomizeHeavyHitter, toHex,
  validateHeavyHitterValue, valueBytes, fromHex,
} from './heavy_hitters.js';
import { HttpTransport, toBase64 } from './http_transport.js';
import { mergedLabels } from './labels.js';
import {
  clipValue, levelOf, numericDesignFromWire, numericLocalEpsilon, randomizeNumeric,
} from './numeric.js';
import { secureRandom } from './random.js';
import { randomizeAnswer } from './randomizer.js';
import { MemoryStore } from './stores.js';

const DEFAULTS = {
  labels: {},
  maxEpsilonPerMetric: 0,
  onePerPeriod: true,
  rpcTimeoutMs: 10000,
  maxBatchReports: 1000,
  maxQueuedReports: 100000,
  maxReportAgeMs: 30 * 86400 * 1000,
  backgroundSending: true,
  sendIntervalMs: 200,
  firstDesignWaitMs: 2000,
  initialBackoffMs: 100,
  maxBackoffMs: 5000,
  maxAttempts: 5,
  log: null,
  now: () => Date.now(),
  random: secureRandom,
};

/** Local DP epsilon (nats) of a channel: max |ln(a/b)|, |ln((1-a)/(1-b))| (common/src/design.cc). */
export function epsilonOf(a, b) {
  const absLogRatio = (x, y) => {
    if (x === y) return 0;
    if (x === 0 || y === 0) return Infinity;
    return Math.abs(Math.log(x / y));
  };
  return Math.max(absLogRatio(a, b), absLogRatio(1 - a, 1 - b));
}

/** The design the Reporter uses, from a GetDesignResponse in the JSON mapping. For a metric
 * with categories (response.categories) also `categories` and `categorical` (categorical.js),
 * whose channel is checked against the mechanism. */
export function parseDesign(response) {
  const d = (response && response.design) || {};
  const categories = Array.isArray(response && response.categories) ? [...response.categories] : [];
  const categorical = categories.length > 0 ? categoricalDesignFromWire(d, categories) : null;
  const numeric = (d.parameters && d.parameters.numeric) || response.range
    ? numericDesignFromWire(d, response.range) : null;
  const heavyHitters = d.parameters && d.parameters.heavyHitters ? heavyHittersDesignFromWire(d) : null;
  const a = Number(d.a ?? 0);
  const b = Number(d.b ?? 0);
  const version = Number(d.version);
  if (!(version > 0) || (numeric === null && (!(a >= 0 && a <= 1 && b >= 0 && b <= 1) || a === b))) {
    throw new DeniableError('INVALID_ARGUMENT', `design: unusable a=${d.a} b=${d.b} version=${d.version}`);
  }
  const randomization = response.randomization ?? 'MEMOIZED';
  if (!['RANDOMIZATION_UNSPECIFIED', 'MEMOIZED', 'FRESH_PER_PERIOD', 0, 1, 2].includes(randomization)) {
    throw new DeniableError('INVALID_ARGUMENT', `randomization: unknown value ${randomization}`);
  }
  return {
    version, a, b,
    epsilon: categorical ? categorical.epsilon : numeric ? numericLocalEpsilon(numeric)
      : heavyHitters ? heavyHitters.epsilon : epsilonOf(a, b),
    categories, categorical, numeric, heavyHitters,
    precision: Number(response.timePrecisionSeconds) || 3600,
    period: Number(response.reportingPeriodSeconds) || 86400,
    fresh: randomization === 'FRESH_PER_PERIOD' || randomization === 2,
    // fixed64 in the JSON mapping: a decimal string, kept as is; '0' from older collectors.
    fingerprint: String(response.designFingerprint ?? '0'),
    windowFirsts: !response.windowFirstsOff,  // send Report.windowFirsts
    once: Boolean(response.reportingOnce),     // one report of the metric ever
  };
}

// Whether a report at `now` (Unix seconds) is the device's first of its metric in its UTC day,
// ISO week (from Monday) and calendar month, its previous one being at `previous` (0: none).
// docs/statistics.md section 4.4; the C++ SDK's WindowFirsts.
export function windowFirsts(previous, now) {
  if (!(previous > 0)) return { day: true, week: true, month: true };
  const day = (t) => Math.floor(t / 86400);
  const week = (t) => Math.floor((day(t) - 4) / 7);  // 1970-01-05 was a Monday
  const month = (t) => { const d = new Date(t * 1000); return d.getUTCFullYear() * 12 + d.getUTCMonth(); };
  return { day: day(previous) !== day(now), week: week(previous) !== week(now), month: month(previous) !== month(now) };
}

// The memo key of a true answer: the boolean of a yes/no metric, or the index of a category.
// Messages never repeat the answer passed (a misspelt answer is still an answer).
function trueValue(metric, design, answer) {
  checkKind(metric, design, typeof answer !== 'boolean');
  if (design.categorical === null) return answer;
  const index = design.categories.indexOf(answer);
  if (index < 0) {
    throw new DeniableError('INVALID_ARGUMENT',
      `category: not one of the categories of metric "${metric}" (${design.categories.join(', ')}; names are case sensitive)`);
  }
  return index;
}

// Refuses a yes/no answer (categoricalAnswer false) or a category for a metric of another kind,
// as the C++ SDK does.
function checkKind(metric, design, categoricalAnswer) {
  if (design.heavyHitters) {
    throw new DeniableError('FAILED_PRECONDITION',
      `metric: "${metric}" is a heavy-hitters metric (string values): report its value with reportString(metric, value)`);
  }
  if (design.numeric) {
    throw new DeniableError('INVALID_ARGUMENT',
      `metric: "${metric}" is a numeric metric: report its value with reportValue(metric, number)`);
  }
  if (design.categorical === null && categoricalAnswer) {
    throw new DeniableError('FAILED_PRECONDITION',
      `answer: metric "${metric}" is a yes/no metric without categories: report true or false`);
  }
  if (design.categorical !== null && !categoricalAnswer) {
    throw new DeniableError('FAILED_PRECONDITION',
      `answer: metric "${metric}" has categories (${design.categories.join(', ')}): report one of them by name, not a yes/no answer`);
  }
}

function emptyLedger() {
  return {
    reportsAccepted: 0, reportsAcknowledged: 0, randomizations: 0, epsilonSpent: 0,
    epsilonIfFresh: 0, periodStartSeconds: 0, reportsThisPeriod: 0, reportsRepeatedInPeriod: 0,
    lastReportSeconds: 0,
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class Reporter {
  #o;
  #transport;
  #store;
  #designs = new Map();
  #stale = new Set();
  #sending = Promise.resolve();
  #reporting = Promise.resolve();
  #batchLimit;
  #session = { sendAttempts: 0, failedAttempts: 0, batchSplits: 0, keptAfterRejection: 0 };
  #timer = null;
  #closed = false;
  #backoffStep = 0;

  constructor(options = {}) {
    const o = { ...DEFAULTS, ...options };
    for (const name of ['rpcTimeoutMs', 'maxBatchReports', 'maxQueuedReports', 'maxReportAgeMs',
      'sendIntervalMs', 'maxAttempts']) {
      if (!(o[name] > 0)) throw new DeniableError('INVALID_ARGUMENT', `${name}: must be > 0, but is ${o[name]}`);
    }
    if (!(o.maxEpsilonPerMetric >= 0)) {
      throw new DeniableError('INVALID_ARGUMENT', `maxEpsilonPerMetric: must be >= 0, but is ${o.maxEpsilonPerMetric}`);
    }
    this.#o = o;
    this.#transport = o.transport ?? new HttpTransport({ baseUrl: o.baseUrl, token: o.token });
    this.#store = o.store ?? new MemoryStore();
    this.#batchLimit = o.maxBatchReports;
    if (o.backgroundSending) this.#schedule(o.sendIntervalMs);
  }

  async report(metric, answer, { labels } = {}) {
    if (typeof metric !== 'string' || metric === '') {
      throw new DeniableError('INVALID_ARGUMENT', 'metric: must be a non-empty string');
    }
    if (typeof answer !== 'boolean' && typeof answer !== 'string') {
      throw new DeniableError('INVALID_ARGUMENT', 'answer: must be true or false, or a category name (the value of a numeric metric goes to reportValue)');
    }
    const merged = mergedLabels(this.#o.labels, labels);
    const design = await this.#designFor(metric, this.#o.firstDesignWaitMs);
    const value = trueValue(metric, design, answer);
    const o = this.#o;
    const entry = design.categorical !== null
      ? this.#categoryEntry(design, value, merged)
      : { kind: 'bit', key: value ? 1 : 0, labels: merged, draw: () => randomizeAnswer(design.a, design.b, value, drawsFrom(o.random)) };
    return this.#serialized(() => this.#commit(metric, design, entry));
  }

  /** report(metric, category) with the category by its index in the metric's order (index.d.ts). */
  async reportCategoryIndex(metric, index, { labels } = {}) {
    if (typeof metric !== 'string' || metric === '') {
      throw new DeniableError('INVALID_ARGUMENT', 'metric: must be a non-empty string');
    }
    if (!Number.isInteger(index)) throw new DeniableError('INVALID_ARGUMENT', 'category: index must be an integer');
    const merged = mergedLabels(this.#o.labels, labels);
    const design = await this.#designFor(metric, this.#o.firstDesignWaitMs);
    checkKind(metric, design, true);
    const k = design.categories.length;
    if (index < 0 || index >= k) {
      throw new DeniableError('INVALID_ARGUMENT', `category: index must be in [0, ${k}) for metric "${metric}"`);
    }
    return this.#serialized(() => this.#commit(metric, design, this.#categoryEntry(design, index, merged)));
  }

  #categoryEntry(design, index, labels) {
    const random = this.#o.random;
    return { kind: 'category', key: index, labels, draw: () => randomizeCategory(design.categorical, index, drawsFrom(random)) };
  }

  /** A numeric metric's value: clipped, rounded to its level, randomized (index.d.ts). */
  async reportValue(metric, value, { labels } = {}) {
    if (typeof metric !== 'string' || metric === '') {
      throw new DeniableError('INVALID_ARGUMENT', 'metric: must be a non-empty string');
    }
    if (typeof value !== 'number') throw new DeniableError('INVALID_ARGUMENT', 'value: must be a number');
    if (Number.isNaN(value)) throw new DeniableError('INVALID_ARGUMENT', 'value: is NaN, not a number to report');
    const merged = mergedLabels(this.#o.labels, labels);
    const design = await this.#designFor(metric, this.#o.firstDesignWaitMs);
    const nd = design.numeric;
    if (design.heavyHitters) {
      throw new DeniableError('INVALID_ARGUMENT',
        `metric: "${metric}" is not a numeric metric (it is a heavy-hitters metric of string values: report its value with reportString(metric, value))`);
    }
    if (!nd) {
      const kind = design.categorical !== null
        ? `has categories (${design.categories.join(', ')}): report one of them by name`
        : 'is a yes/no metric: report true or false';
      throw new DeniableError('INVALID_ARGUMENT', `metric: "${metric}" is not a numeric metric (it ${kind} with report())`);
    }
    const o = this.#o;
    const { value: x, clipped } = clipValue(nd, value);
    return this.#serialized(async () => {
      // The device's alpha for this metric: drawn once (crypto.getRandomValues), kept for good.
      const alpha = nd.mechanism === 'ONE_BIT_MEAN'
        ? await this.#store.mutate((state) => ((state.numericAlpha ??= {})[metric] ??= o.random.uniform()))
        : 0;
      const level = levelOf(nd, x, alpha);
      return this.#commit(metric, design, {
        kind: 'numeric', key: level, clipped, labels: merged, draw: () => randomizeNumeric(nd, level, drawsFrom(o.random)),
      });
    });
  }

  /** A heavy-hitters metric's string value (bytes, or a string as UTF-8): one sketch bit for the
   * device's group, drawn once per (metric, design version) and kept; memoized per value under
   * an HMAC key (index.d.ts). */
  async reportString(metric, value, { labels } = {}) {
    if (typeof metric !== 'string' || metric === '') {
      throw new DeniableError('INVALID_ARGUMENT', 'metric: must be a non-empty string');
    }
    const bytes = valueBytes(value);
    const merged = mergedLabels(this.#o.labels, labels);
    const design = await this.#designFor(metric, this.#o.firstDesignWaitMs);
    const hh = design.heavyHitters;
    if (!hh) {
      const kind = design.numeric ? 'is a numeric metric: report its value with reportValue(metric, number)'
        : design.categorical !== null ? `has categories (${design.categories.join(', ')}): report one of them by name with report()`
          : 'is a yes/no metric: report true or false with report()';
      throw new DeniableError('FAILED_PRECONDITION', `metric: "${metric}" is not a heavy-hitters metric (it ${kind})`);
    }
    validateHeavyHitterValue(hh, bytes);
    const o = this.#o;
    return this.#serialized(async () => {
      // The device's group for this metric and version, and the store's memo key: drawn once
      // (crypto.getRandomValues), kept for good.
      const { group, memoKey } = await this.#store.mutate((state) => {
        const groups = (state.hhGroup ??= {});
        const g = (groups[`${metric}\u0000${design.version}`] ??= drawGroup(hh, drawsFrom(o.random)));
        state.hhMemoKey ??= toHex(o.random.bytes(32));
        return { group: g, memoKey: state.hhMemoKey };
      });
      return this.#commit(metric, design, {
        kind: 'heavy_hitters', key: toHex(hmacSha256(fromHex(memoKey), bytes)), labels: merged,
        draw: () => randomizeHeavyHitter(hh, bytes, group, drawsFrom(o.random)),
      });
    });
  }

  // One report at a time: lookup, randomize and commit are one step.
  #serialized(task) {
    const run = this.#reporting.then(task);
    this.#reporting = run.catch(() => {});
    return run;
  }

  /** The category names of `metric` in its order (empty for a yes/no metric). */
  async categories(metric) {
    return [...(await this.#designFor(metric, this.#o.firstDesignWaitMs)).categories];
  }

  // entry: {kind: 'bit' | 'category' | 'numeric' | 'heavy_hitters', key: the memo key (0/1, the
  // category index, the level or the hex HMAC of a string value), draw(): the randomized answer, clipped: count in valuesClipped, labels: the
  // report's (checked) labels}.
  async #commit(metric, design, { kind, key: memoKey, draw, clipped = false, labels }) {
    const o = this.#o;
    const nowSeconds = Math.floor(o.now() / 1000);
    const periodStart = nowSeconds - (((nowSeconds % design.period) + design.period) % design.period);
    const result = await this.#store.mutate((state) => {
      // Checks first, changes after: a throw leaves the state as it was.
      const ledger = state.ledger[metric] ?? emptyLedger();
      if ((o.onePerPeriod && ledger.periodStartSeconds === periodStart && ledger.reportsThisPeriod > 0) ||
          (design.once && ledger.reportsAccepted > 0)) {
        state.ledger[metric] = ledger;
        ledger.reportsRepeatedInPeriod += 1;  // the period's report is queued: nothing sent
        return { id: null, evicted: 0 };
      }
      const key = `${metric}\u0000${design.version}\u0000${memoKey}`;
      // categoryMemo: added in SDK 0.2, numericMemo in 0.4, hhMemo in 0.5 (a store written before
      // has none; it is created here).
      const tableName = { bit: 'memo', category: 'categoryMemo', numeric: 'numericMemo', heavy_hitters: 'hhMemo' }[kind];
      const memoTable = state[tableName] ?? {};
      const memo = design.fresh ? undefined : memoTable[key];
      if (design.fresh && o.maxEpsilonPerMetric === 0) {
        throw new DeniableError('FAILED_PRECONDITION',
          `maxEpsilonPerMetric: metric "${metric}" randomizes afresh each period (FRESH_PER_PERIOD); ` +
          'set maxEpsilonPerMetric to the most this device may spend on it');
      }
      if (memo === undefined && o.maxEpsilonPerMetric > 0 &&
          ledger.epsilonSpent + design.epsilon > o.maxEpsilonPerMetric) {
        throw new DeniableError('RESOURCE_EXHAUSTED',
          `metric "${metric}": a new draw would spend ${design.epsilon} nats on top of ` +
          `${ledger.epsilonSpent}, above maxEpsilonPerMetric = ${o.maxEpsilonPerMetric}`);
      }
      // The only uses of the true value: the memo key and the randomizer; only the randomized
      // report comes out.
      state.ledger[metric] = ledger;
      const randomized = memo === undefined;
      const drawn = randomized ? draw() : memo;
      if (randomized && !design.fresh) (state[tableName] ??= {})[key] = drawn;
      const id = o.random.bytes(16);
      const report = {
        metric, designVersion: design.version, bit: kind === 'bit' ? drawn : 0, reportId: toBase64(id),
        eventTimeSeconds: String(nowSeconds - (nowSeconds % design.precision)),
        labels: { ...labels },
        designFingerprint: design.fingerprint,
      };
      if (kind === 'category') report.categorical = { ...drawn };
      if (kind === 'heavy_hitters') {
        report.bit = drawn.bit;
        report.heavyHitters = { ...drawn.heavyHitters };
      }
      if (kind === 'numeric') {
        report.bit = drawn.bit;
        if (drawn.numeric) report.numeric = { buckets: [...drawn.numeric.buckets], bits: [...drawn.numeric.bits] };
      }
      if (clipped) {
        state.counters.values_clipped = (state.counters.values_clipped ?? 0) + 1;
        ledger.valuesClipped = (ledger.valuesClipped ?? 0) + 1;  // absent in older stores
      }
      const eventTime = nowSeconds - (nowSeconds % design.precision);
      if (design.windowFirsts) report.windowFirsts = windowFirsts(ledger.lastReportSeconds ?? 0, eventTime);
      ledger.lastReportSeconds = eventTime;  // added in SDK 0.3: absent (0) in older stores
      state.queue.push({ sequence: state.nextSequence++, metric, report });
      ledger.reportsAccepted += 1;
      if (randomized) {
        ledger.randomizations += 1;
        ledger.epsilonSpent += design.epsilon;
      }
      ledger.epsilonIfFresh += design.epsilon;
      ledger.reportsThisPeriod = ledger.periodStartSeconds === periodStart ? ledger.reportsThisPeriod + 1 : 1;
      ledger.periodStartSeconds = periodStart;
      const evicted = Math.max(0, state.queue.length - o.maxQueuedReports);
      if (evicted > 0) {
        state.queue.splice(0, evicted);
        state.counters.dropped_queue_full += evicted;
      }
      return { id, evicted };
    });
    if (result.evicted > 0) {
      this.#log('error', `dropped ${result.evicted} reports: queue full (maxQueuedReports ${o.maxQueuedReports}), oldest first`);
    }
    return result.id;
  }

  async prefetch(metrics, timeoutMs = 5000) {
    let first = null;
    for (const metric of metrics) {
      try {
        await this.#fetchDesign(metric, timeoutMs);
      } catch (e) {
        first = first ?? e;
      }
    }
    if (first) throw first;
  }

  flush(timeoutMs = Infinity) {
    return this.#exclusive(() => this.#flushLocked(timeoutMs));
  }

  async #flushLocked(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    let firstDrop = null;
    let failures = 0;
    let step = 0;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new DeniableError('DEADLINE_EXCEEDED', `flush: ${await this.pending()} reports still queued at the deadline`);
      }
      const [outcome, error] = await this.#sendOneBatch(Math.min(left, this.#o.rpcTimeoutMs));
      if (outcome === 'empty') {
        await this.#refreshStale();
        if (firstDrop) throw firstDrop;
        return;
      }
      if (outcome !== 'transient') {
        failures = 0;
        step = 0;
        if (outcome === 'permanent') firstDrop = firstDrop ?? error;
        continue;
      }
      failures += 1;
      if (failures >= this.#o.maxAttempts) throw error;
      await sleep(Math.min(this.#backoff(step++), Math.max(0, deadline - Date.now())));
    }
  }

  async pending() {
    return this.#store.read((state) => state.queue.length);
  }

  async ledger() {
    return this.#store.read((state) => structuredClone(state.ledger));
  }

  async stats() {
    const persisted = await this.#store.read((state) => ({ queued: state.queue.length, ...state.counters }));
    return {
      queued: persisted.queued,
      acknowledged: persisted.acknowledged,
      duplicates: persisted.duplicates,
      droppedRejected: persisted.dropped_rejected,
      droppedQueueFull: persisted.dropped_queue_full,
      droppedTooOld: persisted.dropped_too_old,
      droppedDesignMismatch: persisted.dropped_design_mismatch ?? 0,
      valuesClipped: persisted.values_clipped ?? 0,
      ...this.#session,
    };
  }

  async close({ drainTimeoutMs = 2000 } = {}) {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#sending.catch(() => {});
    if (drainTimeoutMs > 0) {
      try {
        await this.flush(drainTimeoutMs);
      } catch (e) {
        this.#log('warning', `close: ${e.message}`);
      }
    }
    await this.#store.close();
  }

  // ---- internals ----
  #log(level, message) {
    if (this.#o.log) this.#o.log(level, message);
  }

  #exclusive(task) {
    const run = this.#sending.then(task, task);
    this.#sending = run.catch(() => {});
    return run;
  }

  #backoff(step) {
    const bound = Math.min(this.#o.maxBackoffMs, this.#o.initialBackoffMs * 2 ** Math.min(step, 30));
    return this.#o.random.uniform() * bound;  // full jitter
  }

  async #fetchDesign(metric, timeoutMs) {
    const response = await this.#transport.getDesign(metric, timeoutMs);
    const design = parseDesign(response);
    await this.#store.mutate((state) => { state.designs[metric] = response; });
    this.#designs.set(metric, design);
    return design;
  }

  async #designFor(metric, waitMs) {
    const cached = this.#designs.get(metric);
    if (cached) return cached;
    const stored = await this.#store.read((state) => state.designs[metric]);
    if (stored) {
      try {
        const design = parseDesign(stored);
        this.#designs.set(metric, design);
        return design;
      } catch {
        // fetched again below
      }
    }
    if (waitMs <= 0) {
      this.#stale.add(metric);
      throw new DeniableError('UNAVAILABLE', `metric "${metric}": design not known yet; fetching it in the background (or call prefetch)`);
    }
    return this.#fetchDesign(metric, Math.min(waitMs, this.#o.rpcTimeoutMs));
  }

  async #refreshStale() {
    const metrics = [...this.#stale].sort();
    this.#stale.clear();
    for (const metric of metrics) {
      try {
        await this.#fetchDesign(metric, this.#o.rpcTimeoutMs);
      } catch (e) {
        this.#log('warning', `design of "${metric}" not refreshed: ${e.message}`);
      }
    }
  }

  // The collector disowned these reports' (metric, design version): forget the cached design and
  // that version's memoized bits (the next report draws afresh with the collector's design),
  // and fetch the design again. The dropped reports are never randomized again.
  async #forgetDesigns(reports) {
    await this.#store.mutate((state) => {
      for (const r of reports) {
        delete state.designs[r.metric];
        for (const value of [0, 1]) delete state.memo[`${r.metric}\u0000${r.designVersion}\u0000${value}`];
        const prefix = `${r.metric}\u0000${r.designVersion}\u0000`;
        for (const table of [state.categoryMemo, state.numericMemo, state.hhMemo]) {
          for (const key of Object.keys(table ?? {})) {
            if (key.startsWith(prefix)) delete table[key];
          }
        }
      }
    });
    for (const r of reports) {
      this.#designs.delete(r.metric);
      this.#stale.add(r.metric);
    }
  }

  async #drop(sequences, counter, reason) {
    const set = new Set(sequences);
    await this.#store.mutate((state) => {
      state.queue = state.queue.filter((q) => !set.has(q.sequence));
      state.counters[counter] = (state.counters[counter] ?? 0) + sequences.length;
    });
    this.#log('error', `dropped ${sequences.length} reports: ${reason}`);
  }

  // One SubmitReports call for the oldest batch: [outcome, DeniableError|null] with outcome
  // empty, sent, split, permanent or transient. Called only under #exclusive.
  async #sendOneBatch(timeoutMs) {
    const batch = await this.#store.read((state) => structuredClone(state.queue.slice(0, this.#batchLimit)));
    if (batch.length === 0) return ['empty', null];
    const nowSeconds = this.#o.now() / 1000;
    const tooOld = batch.filter((q) => nowSeconds - Number(q.report.eventTimeSeconds) > this.#o.maxReportAgeMs / 1000);
    if (tooOld.length > 0) {
      await this.#drop(tooOld.map((q) => q.sequence), 'dropped_too_old', `older than maxReportAgeMs (${this.#o.maxReportAgeMs} ms)`);
      return ['sent', null];
    }
    this.#session.sendAttempts += 1;
    const size = batch.length;
    let response;
    try {
      response = await this.#transport.submitReports(batch.map((q) => q.report), timeoutMs);
    } catch (e) {
      const error = e instanceof DeniableError ? e : new DeniableError('UNAVAILABLE', String(e && e.message));
      this.#session.failedAttempts += 1;
      if (!isPermanentBatchError(error.code)) {
        this.#log('info', `batch of ${size} reports not delivered, will retry: ${error.message}`);
        return ['transient', error];
      }
      if (size > 1) {  // too large for this server, or one bad report in it: halve, never drop
        this.#batchLimit = Math.floor(size / 2);
        this.#session.batchSplits += 1;
        this.#log('warning', `batch of ${size} reports rejected whole (${error.message}); re-sending in batches of ${this.#batchLimit}`);
        return ['split', null];
      }
      const reason = `rejected by the collector for good: ${error.message}`;
      await this.#drop([batch[0].sequence], 'dropped_rejected', reason);
      return ['permanent', new DeniableError(error.code, `dropped 1 report: ${reason}`)];
    }
    this.#batchLimit = Math.min(this.#o.maxBatchReports, this.#batchLimit * 2);
    const rejected = new Map();
    for (const r of response.rejections ?? []) {
      const index = Number(r.index ?? 0);
      if (!(index >= 0 && index < size) || rejected.has(index)) {
        const error = new DeniableError('UNAVAILABLE', `malformed response: rejection index ${index} in a batch of ${size}; nothing removed, will retry`);
        this.#log('warning', error.message);
        return ['transient', error];
      }
      rejected.set(index, r);
    }
    const acknowledged = new Set(batch.filter((_, i) => !rejected.has(i)).map((q) => q.sequence));
    const duplicates = Number(response.duplicates ?? 0);
    await this.#store.mutate((state) => {
      for (const q of state.queue) {
        if (acknowledged.has(q.sequence)) {
          const ledger = state.ledger[q.metric];
          if (ledger) ledger.reportsAcknowledged += 1;
        }
      }
      state.queue = state.queue.filter((q) => !acknowledged.has(q.sequence));
      state.counters.acknowledged += acknowledged.size;
      state.counters.duplicates += duplicates;
    });
    for (const metric of response.staleMetrics ?? []) this.#stale.add(metric);
    let outcome = 'sent';
    let error = null;
    const entries = [...rejected.entries()].sort((x, y) => x[0] - y[0]);
    // FAILED_PRECONDITION per report: randomized with a design the collector does not have under
    // that version (docs/sdk.md, "Design fingerprint").
    const isMismatch = ([, r]) => rejectionCode(Number(r.code)) === 'FAILED_PRECONDITION';
    const mismatched = entries.filter(isMismatch);
    const dropped = entries.filter((e) => e[1].permanent && !isMismatch(e));
    const kept = entries.filter((e) => !e[1].permanent && !isMismatch(e));
    if (mismatched.length > 0) {
      const reason = 'randomized with a design the collector does not have; fetching the design ' +
        `again, first: ${mismatched[0][1].reason}`;
      await this.#forgetDesigns(mismatched.map(([i]) => batch[i].report));
      await this.#drop(mismatched.map(([i]) => batch[i].sequence), 'dropped_design_mismatch', reason);
      outcome = 'permanent';
      error = new DeniableError('FAILED_PRECONDITION', `dropped ${mismatched.length} reports: ${reason}`);
    }
    if (dropped.length > 0) {
      const first = dropped[0][1];
      const code = rejectionCode(Number(first.code));
      const reason = `rejected by the collector for good, first: ${code}: ${first.reason}`;
      await this.#drop(dropped.map(([i]) => batch[i].sequence), 'dropped_rejected', reason);
      outcome = 'permanent';
      error = new DeniableError(code, `dropped ${dropped.length} reports: ${reason}`);
    }
    if (kept.length > 0) {
      this.#session.keptAfterRejection += kept.length;
      const first = kept[0][1];
      error = new DeniableError('UNAVAILABLE', `${kept.length} reports rejected for now, kept for retry, first: ${rejectionCode(Number(first.code))}: ${first.reason}`);
      this.#log('info', error.message);
      outcome = 'transient';
    }
    return [outcome, error];
  }

  #schedule(ms) {
    if (this.#closed) return;
    this.#timer = setTimeout(() => this.#tick(), ms);
    // Node: a pending send does not keep the process alive; the queue is durable in the store.
    if (this.#timer && typeof this.#timer.unref === 'function') this.#timer.unref();
  }

  async #tick() {
    let wait = this.#o.sendIntervalMs;
    try {
      await this.#exclusive(async () => {
        await this.#refreshStale();
        for (;;) {
          if (this.#closed) return;
          const [outcome] = await this.#sendOneBatch(this.#o.rpcTimeoutMs);
          if (outcome === 'empty') {
            this.#backoffStep = 0;
            return;
          }
          if (outcome === 'transient') {
            wait = this.#backoff(this.#backoffStep++);
            return;
          }
          this.#backoffStep = 0;
        }
      });
    } catch (e) {  // a store error: everything stays queued; try again later
      this.#log('warning', `sender: ${e.message}`);
      wait = this.#backoff(this.#backoffStep++);
    }
    this.#schedule(wait);
  }
}
