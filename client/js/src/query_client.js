// QueryClient: the analyst's calls (QueryService: GetPrevalence, GetSeries, GetDifference, and a
// breakdown by label) over the collector's HTTP/JSON API (docs/http.md, docs/sdk.md). Answers
// are the API's JSON as typed in index.d.ts: counts are numbers, missing values null (a
// suppressed bucket's estimate, a categorical metric's yes/no fields). Differences also carry
// the change stated as second minus first (`change`, its interval, `changeText`).
//
//   const q = new QueryClient({ baseUrl: 'http://127.0.0.1:8080', token });
//   const p = await q.getPrevalence({ metric: 'uses_drugs' });         // p.estimateUnbiased
//   const s = await q.getSeries({ metric: 'uses_drugs', start: '-7d' }); // s.buckets
//   await q.getPrevalence({ metric: 'uses_drugs', start: today, interval: 'ANYTIME' }); // every look
//   const d = await q.getDifference({ metric: 'uses_drugs', first: [t0, t1], second: [t1, t2] });
//   d.changeText                                                         // "fell by 1.66 points"
//   (await q.getPrevalence({ metric: 'minutes', quantiles: [0.5] })).numeric  // mean, buckets, ...
//   const top = await q.getTopValues({ metric: 'app' });   // heavy hitters: top.values[i].text
//   await q.getFrequencies({ metric: 'app', values: ['firefox'] });
import { DeniableError } from './errors.js';
import { valueBytes } from './heavy_hitters.js';
import { postJson, toBase64 } from './http_transport.js';

const DAY_SECONDS = 86400;

/**
 * A change as a share (0.0166 is 1.66 percentage points) in words: "rose by 1.66 points",
 * "fell by 1.66 points", "unchanged (0.00 points)" when it rounds to 0.00, "unknown" for null.
 */
export function changeWords(secondMinusFirst) {
  if (secondMinusFirst === null || secondMinusFirst === undefined || Number.isNaN(secondMinusFirst)) {
    return 'unknown';
  }
  const points = 100 * secondMinusFirst;
  if (Math.abs(points) < 0.005) return 'unchanged (0.00 points)';
  return `${points > 0 ? 'rose' : 'fell'} by ${Math.abs(points).toFixed(2)} points`;
}

/** Unix seconds of a time: a Date, Unix seconds, or "-7d" / "-24h" / "-90m" before `now`. */
function toSeconds(value, field, now) {
  if (value === undefined || value === null) return undefined;
  if (value instanceof Date) return Math.floor(value.getTime() / 1000);
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  const m = typeof value === 'string' && /^-(\d+)([smhdw])$/.exec(value);
  if (m) {
    const unit = { s: 1, m: 60, h: 3600, d: DAY_SECONDS, w: 7 * DAY_SECONDS }[m[2]];
    return Math.floor(now() / 1000) - Number(m[1]) * unit;
  }
  throw new DeniableError('INVALID_ARGUMENT',
    `${field}: must be a Date, Unix seconds or a time before now ("-7d", "-24h"), but is ${JSON.stringify(value)}`);
}

/** IntervalKind's name: 'FIXED_N' or 'ANYTIME' (any case; 'fixed' too, as the CLI's
 * --interval_kind). Throws INVALID_ARGUMENT naming "interval" for anything else. */
function intervalKind(value) {
  const name = typeof value === 'string' ? value.toUpperCase() : '';
  if (name === 'FIXED' || name === 'FIXED_N') return 'FIXED_N';
  if (name === 'ANYTIME') return 'ANYTIME';
  throw new DeniableError('INVALID_ARGUMENT',
    `interval: must be 'FIXED_N' or 'ANYTIME', but is ${JSON.stringify(value)}`);
}

/** The change of a (category) difference as second minus first; the wire's is first - second. */
function withChange(d) {
  const has = d.difference !== null && d.difference !== undefined;
  return {
    ...d,
    change: has ? -d.difference : null,
    changeCiLower: has ? -d.ciUpper : null,
    changeCiUpper: has ? -d.ciLower : null,
    changeText: changeWords(has ? -d.difference : null),
  };
}

function fromBase64(text) {
  if (typeof Buffer !== 'undefined') return new Uint8Array(Buffer.from(text, 'base64'));
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A TopValues answer with each value's bytes (`valueBytes`) and UTF-8 text (`text`, null when
 * the bytes are not UTF-8) beside the wire's base64 `value`. */
function withValues(t) {
  return {
    ...t,
    values: (t.values ?? []).map((v) => {
      const bytes = fromBase64(v.value ?? '');
      let text = null;
      try {
        text = UTF8.decode(bytes);
      } catch {
        text = null;
      }
      return { ...v, valueBytes: bytes, text };
    }),
  };
}

export class QueryClient {
  /**
   * @param {{baseUrl: string, token?: string, fetch?: typeof fetch, timeoutMs?: number,
   *   now?: () => number}} options
   *   baseUrl: the collector's HTTP listener (`deniable-server --http_listen`), not its gRPC
   *   port; token: an analyst bearer token; timeoutMs: per call (default 10000); now: the clock
   *   for relative times (ms, default Date.now).
   */
  constructor({ baseUrl, token, fetch: fetchImpl, timeoutMs = 10000, now = Date.now } = {}) {
    if (typeof baseUrl !== 'string' || !/^https?:\/\//.test(baseUrl)) {
      throw new DeniableError('INVALID_ARGUMENT',
        `baseUrl: must be an http(s) URL of the collector's HTTP listener, but is ${JSON.stringify(baseUrl)}`);
    }
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.token = token;
    this.fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
    this.timeoutMs = timeoutMs;
    this.now = now;
  }

  #call(method, body) {
    return postJson(this, `QueryService/${method}`, body, this.timeoutMs);
  }

  #common(o) {
    const body = {};
    if (o.level !== undefined) body.confidenceLevel = o.level;
    if (o.method !== undefined) body.method = o.method;
    if (o.simultaneous !== undefined) body.simultaneous = o.simultaneous;
    if (o.combination !== undefined) body.combination = o.combination;
    if (o.interval !== undefined) body.interval = intervalKind(o.interval);
    if (o.anytimeTunedReports !== undefined) body.anytimeTunedReports = o.anytimeTunedReports;
    return body;
  }

  /** GetPrevalence of `metric` over [start, end) (open when absent). interval: 'FIXED_N'
   * (absent: valid at one look) or 'ANYTIME' (valid at every look at once, for a range within
   * one reporting period or calendar window; anytimeTunedReports: where it is tightest, 0 =
   * 10000); the answer's intervalKind says which. */
  async getPrevalence(o) {
    const body = { metric: o.metric, ...this.#common(o) };
    const start = toSeconds(o.start, 'start', this.now);
    const end = toSeconds(o.end, 'end', this.now);
    if (start !== undefined) body.startTimeSeconds = start;
    if (end !== undefined) body.endTimeSeconds = end;
    if (o.groupBy !== undefined) body.groupBy = o.groupBy;
    // A numeric metric's D_BIT_FLIP quantile levels, each in (0, 1); absent: 0.5, 0.9, 0.99.
    if (o.quantiles !== undefined) body.quantiles = [...o.quantiles];
    return this.#call('GetPrevalence', body);
  }

  /** The prevalence per value of the label `groupBy`: GetPrevalence's groups. */
  async getBreakdown(o) {
    if (!o.groupBy) throw new DeniableError('INVALID_ARGUMENT', 'groupBy: a label name is needed');
    return (await this.getPrevalence(o)).groups;
  }

  /** GetSeries over [start, end) (default: the last 30 days to now) in buckets (default DAY);
   * interval and anytimeTunedReports as in getPrevalence, per bucket. */
  async getSeries(o) {
    const end = toSeconds(o.end, 'end', this.now) ?? Math.floor(this.now() / 1000);
    const start = toSeconds(o.start, 'start', this.now) ?? end - 30 * DAY_SECONDS;
    return this.#call('GetSeries', {
      metric: o.metric, startTimeSeconds: start, endTimeSeconds: end, bucket: o.bucket ?? 'DAY',
      ...this.#common(o),
    });
  }

  /** GetTopValues of a heavy-hitters metric over [start, end): the common values found with
   * no candidates (maxPrefixes kept per level), each estimated from the held-out group. */
  async getTopValues(o) {
    const body = { metric: o.metric };
    const start = toSeconds(o.start, 'start', this.now);
    const end = toSeconds(o.end, 'end', this.now);
    if (start !== undefined) body.startTimeSeconds = start;
    if (end !== undefined) body.endTimeSeconds = end;
    if (o.level !== undefined) body.confidenceLevel = o.level;
    if (o.maxPrefixes !== undefined) body.maxPrefixes = o.maxPrefixes;
    return withValues(await this.#call('GetTopValues', body));
  }

  /** GetFrequencies: the shares of the candidate `values` (strings as UTF-8, or bytes) of a
   * heavy-hitters metric; estimationGroupOnly for values chosen by looking at this data. */
  async getFrequencies(o) {
    if (!Array.isArray(o.values)) throw new DeniableError('INVALID_ARGUMENT', 'values: must be an array of strings or bytes');
    const values = o.values.map((v, i) => {
      try {
        return toBase64(valueBytes(v));
      } catch (e) {
        throw new DeniableError('INVALID_ARGUMENT', `values[${i}]: ${e.detail.replace(/^value: /, '')}`);
      }
    });
    const body = { metric: o.metric, values };
    const start = toSeconds(o.start, 'start', this.now);
    const end = toSeconds(o.end, 'end', this.now);
    if (start !== undefined) body.startTimeSeconds = start;
    if (end !== undefined) body.endTimeSeconds = end;
    if (o.level !== undefined) body.confidenceLevel = o.level;
    if (o.estimationGroupOnly) body.estimationGroupOnly = true;
    return withValues(await this.#call('GetFrequencies', body));
  }

  /**
   * GetDifference of `metric` over first = [start, end) and `metric2` (default the same) over
   * second, with the change as second minus first (`change`, `changeCiLower`, `changeCiUpper`,
   * `changeText`; per category too). `difference` stays the wire's first minus second.
   */
  async getDifference(o) {
    const selection = (metric, window, field) => {
      if (!Array.isArray(window) || window.length !== 2) {
        throw new DeniableError('INVALID_ARGUMENT', `${field}: must be [start, end]`);
      }
      const s = { metric };
      const start = toSeconds(window[0], `${field}[0]`, this.now);
      const end = toSeconds(window[1], `${field}[1]`, this.now);
      if (start !== undefined) s.startTimeSeconds = start;
      if (end !== undefined) s.endTimeSeconds = end;
      if (o.combination !== undefined) s.combination = o.combination;
      return s;
    };
    const body = {
      first: selection(o.metric, o.first, 'first'),
      second: selection(o.metric2 ?? o.metric, o.second, 'second'),
    };
    if (o.level !== undefined) body.confidenceLevel = o.level;
    const d = await this.#call('GetDifference', body);
    return { ...withChange(d), shares: (d.shares ?? []).map(withChange) };
  }
}
