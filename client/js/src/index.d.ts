// Types of the Deniable SDK for browsers and Node. The contract is the C++ Reporter's
// (docs/sdk.md): the answer is randomized on the device with crypto.getRandomValues and never
// leaves it; memoization; one report per metric per reporting period; the privacy ledger; a
// durable queue; only INVALID_ARGUMENT is permanent; per-report rejections honoured.

/** gRPC / absl status code names. */
export type StatusCodeName =
  | 'OK' | 'CANCELLED' | 'UNKNOWN' | 'INVALID_ARGUMENT' | 'DEADLINE_EXCEEDED' | 'NOT_FOUND'
  | 'ALREADY_EXISTS' | 'PERMISSION_DENIED' | 'RESOURCE_EXHAUSTED' | 'FAILED_PRECONDITION'
  | 'ABORTED' | 'OUT_OF_RANGE' | 'UNIMPLEMENTED' | 'INTERNAL' | 'UNAVAILABLE' | 'DATA_LOSS'
  | 'UNAUTHENTICATED';

export declare const StatusCode: Readonly<Record<StatusCodeName, number>>;
export declare function codeName(code: number): StatusCodeName;
/** true only for INVALID_ARGUMENT (the delivery contract). */
export declare function isPermanentBatchError(code: string): boolean;

/** Every rejection of the SDK. `detail` names the field or the cause. */
export declare class DeniableError extends Error {
  constructor(code: StatusCodeName, message: string);
  readonly code: StatusCodeName;
  readonly detail: string;
}

/** A source of randomness: bytes(n) and a uniform draw in [0, 1). */
export interface RandomSource {
  bytes(n: number): Uint8Array;
  uniform(): number;
}
/** crypto.getRandomValues (Web Crypto; Node 18+). The default. */
export declare const secureRandom: RandomSource;
/** Tests and simulations ONLY: reproducible and not secure. */
export declare function seededRandom(seed: number | bigint): RandomSource;

/** A categorical report (JSON mapping of deniable.v1.CategoricalReport): only the fields of
 * the design's mechanism are set. */
export interface WireCategoricalReport {
  /** K_RR: the reported category's index in [0, k). */
  category?: number;
  /** OUE: base64 of ceil(k / 8) bytes, bit v in byte v >> 3 under 1 << (v & 7). */
  bits?: string;
  /** OLH: the hash h(v) = ((hashA v + hashB) mod (2^31 - 1)) mod g and the reported bucket. */
  hashA?: number;
  hashB?: number;
  bucket?: number;
}

/** A dBitFlip report (JSON mapping of deniable.v1.NumericReport): bits[i] belongs to buckets[i]. */
export interface WireNumericReport {
  buckets: number[];
  bits: boolean[];
}

/** A heavy-hitters report's place in the sketch: the device's group (0: estimation; g >= 1: the
 * prefix of g bytes), the row in [0, rows) and the Hadamard coefficient in [0, width). */
export interface WireHeavyHittersReport {
  group: number;
  row: number;
  coefficient: number;
}

/** The wire form of a report (protobuf JSON mapping of deniable.v1.Report). */
export interface WireReport {
  metric: string;
  designVersion: number;
  /** The randomized bit of a yes/no metric; 0 for a metric with categories. */
  bit: 0 | 1;
  /** Metrics with categories only: the randomized report. */
  categorical?: WireCategoricalReport;
  /** Numeric metrics with a D_BIT_FLIP design only (then `bit` is 0): the d sampled buckets in
   * ascending order and one randomized bit for each. */
  numeric?: WireNumericReport;
  /** Heavy-hitters metrics only: where `bit` sits in the sketch (group, row, coefficient). */
  heavyHitters?: WireHeavyHittersReport;
  /** Whether this is the device's first report of the metric in its UTC day, ISO week and
   * month (docs/statistics.md section 4.4); absent when the metric turned them off. */
  windowFirsts?: { day: boolean; week: boolean; month: boolean };
  reportId: string;        // base64 of 16 random bytes
  eventTimeSeconds: string; // rounded down to the metric's time precision
  labels: Record<string, string>;
  /** GetDesignResponse.designFingerprint of the design the bit was drawn with (fixed64 as a
   * decimal string; '0' from an older collector, which the collector does not check). */
  designFingerprint: string;
}

/** How reports reach the collector. HttpTransport is the default; implement it to test. */
export interface ReportTransport {
  getDesign(metric: string, timeoutMs: number): Promise<any>;
  submitReports(reports: WireReport[], timeoutMs: number): Promise<{
    accepted?: number; duplicates?: number; staleMetrics?: string[];
    rejections?: { index?: number; code?: number; reason?: string; permanent?: boolean }[];
  }>;
}

/** ReportService over the collector's HTTP/JSON API (docs/http.md). A page on another origin
 * needs the collector's --http_cors_origins. */
export declare class HttpTransport implements ReportTransport {
  constructor(options: { baseUrl: string; token?: string; fetch?: typeof fetch });
  getDesign(metric: string, timeoutMs: number): Promise<any>;
  submitReports(reports: WireReport[], timeoutMs: number): ReturnType<ReportTransport['submitReports']>;
}

/** The Reporter's state (memo table, queue, ledger, counters, designs). The memo table is
 * sensitive: keep the store in the app's private storage. */
export interface DeviceStore {
  read<T>(fn: (state: any) => T): Promise<T>;
  /** fn (synchronous) changes the state; all of its changes are kept, or none. */
  mutate<T>(fn: (state: any) => T): Promise<T>;
  close(): Promise<void>;
}
export declare function emptyState(): any;
/** Volatile (tests, simulations). The default. */
export declare class MemoryStore implements DeviceStore {
  read<T>(fn: (state: any) => T): Promise<T>;
  mutate<T>(fn: (state: any) => T): Promise<T>;
  close(): Promise<void>;
}
/** Browsers: IndexedDB database `name` (default "deniable"); survives reloads; each change is
 * one transaction (atomic, serialized between tabs). */
export declare class IndexedDbStore implements DeviceStore {
  constructor(options?: { name?: string; indexedDB?: IDBFactory });
  read<T>(fn: (state: any) => T): Promise<T>;
  mutate<T>(fn: (state: any) => T): Promise<T>;
  close(): Promise<void>;
}

export interface MetricLedger {
  reportsAccepted: number;      // report() calls that queued a report
  reportsAcknowledged: number;  // of those, committed by the collector
  randomizations: number;       // fresh draws of the randomizer
  epsilonSpent: number;         // nats, summed over the draws
  epsilonIfFresh: number;       // nats fresh randomization would have spent
  periodStartSeconds: number;   // the period of the last queued report (Unix seconds)
  reportsThisPeriod: number;
  reportsRepeatedInPeriod: number; // report() calls that queued nothing
  lastReportSeconds: number; // event time of the last queued report (window flags); 0: none
  /** Numeric metrics: queued reports whose value was clipped to the range (absent in stores
   * written before issue 28). */
  valuesClipped?: number;
}

export interface DeliveryStats {
  queued: number;
  acknowledged: number;
  duplicates: number;
  droppedRejected: number;
  droppedQueueFull: number;
  droppedTooOld: number;
  /** Rejected per report with FAILED_PRECONDITION: randomized with a design the collector does
   * not have under that version (docs/sdk.md, "Design fingerprint"); never randomized again. */
  droppedDesignMismatch: number;
  /** reportValue() values outside the metric's range, clipped to its nearest end (persisted). */
  valuesClipped: number;
  /** Since this Reporter was created: */
  sendAttempts: number;
  failedAttempts: number;
  batchSplits: number;
  keptAfterRejection: number;
}

export interface ReporterOptions {
  /** The collector's HTTP listener, e.g. "https://collector.example:8443" (or `transport`). */
  baseUrl?: string;
  /** A reporter bearer token. */
  token?: string;
  transport?: ReportTransport;
  /** Default: MemoryStore (volatile). Browsers: IndexedDbStore; Node: FileStore. */
  store?: DeviceStore;
  /** Public, low-cardinality labels sent with every report. Never identifying values. */
  labels?: Record<string, string>;
  /** Nats over the device's life. 0 (default): no cap for MEMOIZED metrics and
   * FRESH_PER_PERIOD metrics refused (FAILED_PRECONDITION); Infinity: no cap. */
  maxEpsilonPerMetric?: number;
  /** true (default): one report per metric per period. false only for load tests/simulations. */
  onePerPeriod?: boolean;
  rpcTimeoutMs?: number;        // 10000
  maxBatchReports?: number;     // 1000
  maxQueuedReports?: number;    // 100000; the oldest are dropped (counted) beyond it
  maxReportAgeMs?: number;      // 30 days: older queued reports are dropped (counted)
  backgroundSending?: boolean;  // true: sends every sendIntervalMs (timer unref'd in Node)
  sendIntervalMs?: number;      // 200
  firstDesignWaitMs?: number;   // 2000; 0: report() of an unknown metric fails UNAVAILABLE
  initialBackoffMs?: number;    // 100
  maxBackoffMs?: number;        // 5000
  maxAttempts?: number;         // 5: transient failures one flush() tolerates
  /** Delivery events (drops with their reason, retries); never a true answer. */
  log?: (level: 'info' | 'warning' | 'error', message: string) => void;
  /** Tests only: the clock (ms since the epoch) and the randomness. */
  now?: () => number;
  random?: RandomSource;
}

/** Options of one report (docs/sdk.md "Per-report options"). */
export interface ReportOptions {
  /** Public labels for this report only, added to ReporterOptions.labels (a key in both takes
   * the value given here). The merged set is checked with the collector's rules (at most 4;
   * keys [a-z][a-z0-9_]{0,31}; values [A-Za-z0-9_.:-]{1,32}) before anything is randomized:
   * INVALID_ARGUMENT "labels..." otherwise. Never identifying or free-text values. */
  labels?: Record<string, string>;
}

export declare class Reporter {
  /** Throws DeniableError INVALID_ARGUMENT naming the option. Does not contact the collector. */
  constructor(options: ReporterOptions);
  /** Randomizes `answer` with the metric's design (or takes its memoized bit) and commits the
   * randomized report to the store. Resolves to the 16-byte report id, or null when this
   * period's report is queued already (nothing queued). Rejects (nothing queued):
   * INVALID_ARGUMENT; the design fetch's code (NOT_FOUND, UNAVAILABLE, DEADLINE_EXCEEDED);
   * FAILED_PRECONDITION; RESOURCE_EXHAUSTED; the store's error. */
  report(metric: string, answer: boolean, options?: ReportOptions): Promise<Uint8Array | null>;
  /** A metric with categories (GetDesignResponse.categories): randomizes the true category,
   * given by name (case sensitive), with the metric's K_RR, OUE or OLH design, or takes the
   * report memoized for (metric, design version, category); the ledger counts the design's
   * epsilon once per distinct category reported. Rejects as report(metric, boolean), and:
   * INVALID_ARGUMENT "category: not one of the categories ..." (the message lists the metric's
   * categories and never repeats the value passed); FAILED_PRECONDITION for a category on a
   * yes/no metric, or a boolean on a metric with categories. */
  report(metric: string, category: string, options?: ReportOptions): Promise<Uint8Array | null>;
  /** report(metric, category) with the true category given by its index in the metric's order
   * (categories(metric)), 0 <= index < k: the same report as by name. Rejects (nothing queued):
   * INVALID_ARGUMENT "category: index must be in [0, k) for metric ..." for an index outside
   * the range (or not an integer); otherwise as report(metric, category). */
  reportCategoryIndex(metric: string, index: number, options?: ReportOptions): Promise<Uint8Array | null>;
  /** A numeric metric (GetDesignResponse.range; docs/sdk.md "Numeric metrics"): clips `value`
   * to the range [lo, hi] (counted in DeliveryStats.valuesClipped), rounds it to its level
   * (ONE_BIT_MEAN: alpha-point rounding with this device's alpha for the metric, drawn once with
   * crypto.getRandomValues and kept in the store; D_BIT_FLIP: its bucket) and randomizes the
   * level, or takes the report memoized for (metric, design version, level); the ledger counts
   * the design's epsilon once per distinct level. Sends `bit` (ONE_BIT_MEAN) or `numeric`
   * (D_BIT_FLIP). Resolves as report(). Rejects (nothing queued): INVALID_ARGUMENT "value: ..."
   * for a value that is not a number or is NaN (never repeated in the message), and
   * "metric: ..." for a metric that is not numeric (report() on a numeric metric likewise);
   * otherwise as report(). */
  reportValue(metric: string, value: number, options?: ReportOptions): Promise<Uint8Array | null>;
  /** A heavy-hitters metric (design parameters heavyHitters; docs/sdk.md "Strings in Python and
   * JS"): `value` is bytes (Uint8Array, another ArrayBuffer view or an ArrayBuffer) or a string
   * sent as its UTF-8 bytes, at most the design's maxLength bytes with no NUL byte. Sends one
   * sketch bit (`heavyHitters` and `bit`) for this device's group, drawn once per (metric,
   * design version) with crypto.getRandomValues and kept in the store; or the report memoized
   * for (metric, design version, value), the memo keyed by an HMAC-SHA256 of the value under a
   * random key of the store (the value is never stored, logged or sent). The ledger counts the
   * design's epsilon once per distinct value. Resolves as report(). Rejects (nothing queued):
   * INVALID_ARGUMENT "value: ..." for a value that is not a string or bytes, holds a lone
   * surrogate, is longer than maxLength bytes or has a NUL byte (the message gives the length
   * or offset, never the value); FAILED_PRECONDITION "metric: ... is not a heavy-hitters
   * metric (it is a yes/no metric | has categories | is a numeric metric ...)"; otherwise as
   * report(). report() and reportValue() on a heavy-hitters metric reject pointing here. */
  reportString(metric: string, value: string | Uint8Array | ArrayBufferView | ArrayBuffer, options?: ReportOptions): Promise<Uint8Array | null>;
  /** The category names of a metric in its order; empty for a yes/no metric. */
  categories(metric: string): Promise<string[]>;
  /** Fetches and caches the designs; rejects with the first error after trying all. */
  prefetch(metrics: string[], timeoutMs?: number): Promise<void>;
  /** Sends until the queue is empty. Rejects DEADLINE_EXCEEDED at the timeout, the last
   * failure after maxAttempts transient failures, or (queue empty) the first drop's code. */
  flush(timeoutMs?: number): Promise<void>;
  pending(): Promise<number>;
  ledger(): Promise<Record<string, MetricLedger>>;
  stats(): Promise<DeliveryStats>;
  /** Stops the sender and flushes for at most drainTimeoutMs (default 2000); what is left
   * stays in the store. */
  close(options?: { drainTimeoutMs?: number }): Promise<void>;
}

export declare function epsilonOf(a: number, b: number): number;

/** A categorical design: the mechanism, k, epsilon (nats), OLH's g (0 otherwise) and the
 * support channel (p*, q*) (docs/statistics.md section 5). */
export interface CategoricalDesign {
  mechanism: 'K_RR' | 'OUE' | 'OLH';
  k: number;
  epsilon: number;
  g: number;
  pStar: number;
  qStar: number;
}
/** The draws a randomizer needs. */
export interface CategoricalDraws {
  bernoulli(p: number): boolean;
  /** A uniform integer in [0, n). */
  below(n: number): number;
}
export declare const LOCAL_HASH_PRIME: number;
/** (p*, q*, g) of a mechanism for (k, epsilon), as common/src/categorical.cc. */
export declare function supportChannel(mechanism: 'K_RR' | 'OUE' | 'OLH', k: number, epsilon: number): { pStar: number; qStar: number; g: number };
/** The design of a served Design (JSON mapping) for a metric with these categories; throws
 * DeniableError INVALID_ARGUMENT when its channel does not match its mechanism. */
export declare function categoricalDesignFromWire(design: any, categories: string[]): CategoricalDesign;
/** The randomized report for the true category index. */
export declare function randomizeCategory(design: CategoricalDesign, category: number, draws: CategoricalDraws): WireCategoricalReport;
/** Draws from a RandomSource (rejection sampling for integers: no modulo bias). */
export declare function drawsFrom(source: RandomSource): CategoricalDraws;
export declare function randomBelow(source: RandomSource, n: number): number;
/** True when the report supports category v (the collector's rule). */
export declare function supports(design: CategoricalDesign, report: WireCategoricalReport, v: number): boolean;
export declare function localHash(a: number, b: number, v: number, g: number): number;

/** A numeric design (common/numeric.h NumericDesign): the k + 1 ascending edges (edges[0] = lo,
 * edges[k] = hi), D_BIT_FLIP's d sampled buckets (0 for ONE_BIT_MEAN), the values' unit. */
export interface NumericDesign {
  mechanism: 'ONE_BIT_MEAN' | 'D_BIT_FLIP';
  epsilon: number;
  edges: readonly number[];
  k: number;
  d: number;
  lo: number;
  hi: number;
  unit: string;
}
/** A checked numeric design; throws DeniableError INVALID_ARGUMENT naming the field. */
export declare function makeNumericDesign(mechanism: 'ONE_BIT_MEAN' | 'D_BIT_FLIP' | 1 | 2, epsilon: number, edges: number[], sampledBuckets?: number, unit?: string): NumericDesign;
/** The design of a served Design (JSON mapping) of a numeric metric, checked against its range. */
export declare function numericDesignFromWire(design: any, range?: { lo?: number; hi?: number; unit?: string }): NumericDesign;
/** The channel (a, b) the collector serves for a numeric design. */
export declare function numericChannel(design: NumericDesign): { a: number; b: number };
/** The local epsilon of one report (what the ledger counts): epsilon, or epsilon / 2 for
 * D_BIT_FLIP with d = 1. */
export declare function numericLocalEpsilon(design: NumericDesign): number;
/** A value clipped to [lo, hi] (NaN: lo), and whether it was. */
export declare function clipValue(design: NumericDesign, value: number): { value: number; clipped: boolean };
/** The level of a value in [lo, hi]: alpha-point rounding (ONE_BIT_MEAN, alpha in [0, 1)) or
 * the bucket (D_BIT_FLIP). */
export declare function levelOf(design: NumericDesign, value: number, alpha: number): number;
/** The randomized answer of a level: {bit} or {bit: 0, numeric}. */
export declare function randomizeNumeric(design: NumericDesign, level: number, draws: CategoricalDraws): { bit: 0 | 1; numeric?: WireNumericReport };

/** A heavy-hitters design (common/heavy_hitters.h HeavyHittersDesign): epsilon in nats per
 * report, maxLength in bytes, the sketch's rows and width, holdoutShare of the devices in the
 * estimation group, the server's hash salt (uint64), levels = maxLength + 1 and the bit's
 * keepProbability e^eps / (1 + e^eps). */
export interface HeavyHittersDesign {
  readonly epsilon: number;
  readonly maxLength: number;
  readonly rows: number;
  readonly width: number;
  readonly holdoutShare: number;
  readonly salt: bigint;
  readonly levels: number;
  readonly keepProbability: number;
}
/** A checked design; throws DeniableError INVALID_ARGUMENT naming the field. salt: a BigInt,
 * a decimal string (fixed64's JSON mapping) or a safe integer. */
export declare function makeHeavyHittersDesign(options?: {
  epsilon?: number; maxLength?: number; rows?: number; width?: number; holdoutShare?: number;
  salt?: bigint | string | number;
}, field?: string): HeavyHittersDesign;
/** The design of a served Design (JSON mapping) of a heavy-hitters metric, its channel checked. */
export declare function heavyHittersDesignFromWire(design: any): HeavyHittersDesign;
/** A value's bytes: a string as UTF-8, bytes as they are; throws INVALID_ARGUMENT naming "value". */
export declare function valueBytes(value: string | Uint8Array | ArrayBufferView | ArrayBuffer): Uint8Array;
/** Throws INVALID_ARGUMENT naming "value" for more than maxLength bytes or a NUL byte. */
export declare function validateHeavyHitterValue(design: HeavyHittersDesign, bytes: Uint8Array): void;
/** The bytes a report of `group` encodes: group 0 and groups > the length the value and a NUL,
 * otherwise its first `group` bytes. */
export declare function prefixOf(bytes: Uint8Array, group: number): Uint8Array;
/** h_{group,row}(data) in [0, width): FNV-1a 64 over salt, group, row, data; splitmix64's mixer. */
export declare function sketchHash(salt: bigint, width: number, group: number, row: number, data: Uint8Array): number;
/** H[cell][coefficient] of the Sylvester-Hadamard matrix is +1. */
export declare function hadamardPlus(cell: number, coefficient: number): boolean;
/** The device's group: 0 with probability holdoutShare, else 1 + below(levels). */
export declare function drawGroup(design: HeavyHittersDesign, draws: CategoricalDraws): number;
/** The randomized answer of a validated value for a device of `group`. */
export declare function randomizeHeavyHitter(design: HeavyHittersDesign, bytes: Uint8Array, group: number, draws: CategoricalDraws): { bit: 0 | 1; heavyHitters: WireHeavyHittersReport };

export declare function parseDesign(response: any): {
  version: number; a: number; b: number; epsilon: number; precision: number; period: number;
  fresh: boolean; categories: string[]; categorical: CategoricalDesign | null;
  numeric: NumericDesign | null; heavyHitters: HeavyHittersDesign | null;
};

// ---- QueryClient (src/query_client.js): the analyst's calls over the HTTP/JSON API. ----
/** A time: a Date, Unix seconds, or a time before now ("-7d", "-24h", "-90m", "-2w"). */
export type TimeArg = Date | number | string;
export type IntervalMethod = 'WALD' | 'WILSON' | 'AGRESTI_COULL' | 'JEFFREYS' | 'CLOPPER_PEARSON';
/** Which guarantee an interval carries (IntervalKind in query_service.proto). */
export type IntervalKind = 'FIXED_N' | 'ANYTIME';
/** One category's share (CategoryShare in query_service.proto). */
export interface CategoryShare {
  category: string; supportCount: number; supportShare: number; estimateUnbiased: number;
  estimateConsistent: number; standardError: number; ciLower: number; ciUpper: number;
  simultaneousLower: number; simultaneousUpper: number;
}
/** One bucket of a D_BIT_FLIP histogram (NumericBucket in query_service.proto). */
export interface NumericBucket {
  lower: number; upper: number; sampled: number; ones: number; estimateUnbiased: number | null;
  estimateConsistent: number | null; standardError: number | null; ciLower: number | null;
  ciUpper: number | null; simultaneousLower: number | null; simultaneousUpper: number | null;
}
/** A quantile of the values with its interval (NumericQuantile). */
export interface NumericQuantile { level: number; value: number | null; ciLower: number | null; ciUpper: number | null }
/** A numeric metric's estimates (NumericEstimate, docs/statistics.md section 6): ONE_BIT_MEAN
 * the mean and the total over the `devices` reporting devices; D_BIT_FLIP the buckets and
 * quantiles. null where the server has no value (the mean of a histogram design). Read a
 * numeric answer from here only: the Prevalence's `estimand` ("active_device_prevalence"),
 * `estimatedYesCount`, `estimateUnbiased` and the other yes/no fields are the bit's, kept for
 * readers older than `estimand` here (docs/http.md). */
export interface NumericEstimate {
  lo: number; hi: number; unit?: string; mechanism: 'one_bit_mean' | 'd_bit_flip';
  mean: number | null; meanStandardError: number | null; meanCiLower: number | null;
  meanCiUpper: number | null; total: number | null; totalStandardError: number | null;
  totalCiLower: number | null; totalCiUpper: number | null; devices: number;
  buckets?: NumericBucket[]; quantiles?: NumericQuantile[]; simultaneousMethod?: string;
  perBucketLevel?: number;
  /** What the mean or histogram is of, in a number's words: "period_mean",
   * "active_device_mean", "mean_period_mean", "period_distribution", ... (absent on a
   * suppressed group or bucket). */
  estimand?: string;
}
export interface VersionEstimate {
  designVersion: number; n: number; yesCount: number; estimateUnbiased: number;
  standardError: number; a: number; b: number; weight: number;
}
/**
 * Prevalence as the HTTP API serves it: null where the server has no value (a suppressed
 * bucket or group: all but metric, n, its range, groupValue and suppressed; a metric with
 * categories: the yes/no fields, see `shares`).
 */
export interface Prevalence {
  metric: string; n: number; yesCount: number | null; yesShare: number | null;
  estimateUnbiased: number | null; estimateClipped: number | null; standardError: number | null;
  ciLower: number | null; ciUpper: number | null; intervalClipped: boolean | null;
  method: IntervalMethod | null; confidenceLevel: number | null; design?: any;
  epsilon: number | string | null; estimatedYesCount: number | null;
  startTimeSeconds: number; endTimeSeconds: number; versions: VersionEstimate[];
  combination: string | null; groupValue: string; groups: Prevalence[]; suppressed: boolean;
  estimand: string | null; periods: number | null; reportingPeriodSeconds: number | null;
  varianceBound: string | null; methodReason: string | null; intervalConstruction: string | null;
  centralEpsilon: number | string | null; centralDelta: number | null; centralN: number | null;
  centralMethod: string | null; centralNote: string | null; shares: CategoryShare[];
  simultaneousMethod: string | null; perCategoryLevel: number | null;
  consistentMethod: string | null;
  /** Which guarantee the intervals carry: one look ('FIXED_N') or every look at once
   * ('ANYTIME', docs/statistics.md section 10); null on a suppressed group or bucket. */
  intervalKind: IntervalKind | null;
  /** ANYTIME: the reports the confidence sequence was tuned at; 0 (or absent) otherwise. */
  anytimeTunedReports?: number;
  /** Numeric metrics only (issue 28). */
  numeric?: NumericEstimate;
}
export interface Series { metric: string; bucket: 'HOUR' | 'DAY' | 'WEEK'; buckets: Prevalence[] }
/** The change as second minus first, beside the wire's `difference` (first minus second). */
export interface Change {
  /** second - first, as a share (-0.0166 is -1.66 percentage points); null when absent. */
  change: number | null; changeCiLower: number | null; changeCiUpper: number | null;
  /** "fell by 1.66 points", "rose by ...", "unchanged (0.00 points)", "unknown". */
  changeText: string;
}
export interface CategoryDifference extends Change {
  category: string; difference: number; standardError: number; ciLower: number; ciUpper: number;
}
export interface Difference extends Change {
  first: Prevalence; second: Prevalence;
  /** The wire's first - second; null for a metric with categories (see `shares`). */
  difference: number | null; standardError: number | null; ciLower: number | null;
  ciUpper: number | null; confidenceLevel: number; shares: CategoryDifference[];
}
export interface QueryOptions {
  metric: string; level?: number; method?: IntervalMethod; quantiles?: number[];
  simultaneous?: 'SIDAK' | 'BONFERRONI'; combination?: 'BY_REPORTS' | 'INVERSE_VARIANCE';
  /** getPrevalence, getSeries: 'FIXED_N' (the default) or 'ANYTIME' ('fixed' / 'anytime' too);
   * ANYTIME needs a range within one reporting period or calendar window. */
  interval?: IntervalKind | 'fixed' | 'anytime';
  /** With ANYTIME: the reports at which the interval is tightest, fixed before looking; 0 = 10000. */
  anytimeTunedReports?: number;
}
/** One value's share among the devices of a heavy-hitters metric (ValueShare): `value` as the
 * wire's base64, `valueBytes` its bytes, `text` its UTF-8 decoding (null when not UTF-8). */
export interface ValueShare {
  value: string; valueBytes: Uint8Array; text: string | null;
  share: number; count: number; standardError: number; collisionSd: number;
  lower: number; upper: number; simultaneousLower: number; simultaneousUpper: number;
  aboveThreshold?: boolean; reports: number;
}
/** getTopValues / getFrequencies's answer (TopValues in query_service.proto). */
export interface TopValues {
  metric: string; designVersion: number; devices: number; estimationReports: number;
  confidenceLevel: number; perValueLevel: number; tested: number; detectionThreshold: number;
  values: ValueShare[]; prefixesPerLevel: number[]; epsilon: number; reportsOfOlderVersions: number;
}
export declare function changeWords(secondMinusFirst: number | null): string;
export declare class QueryClient {
  /** baseUrl: the collector's HTTP listener (deniable-server --http_listen), not its gRPC port. */
  constructor(options: { baseUrl: string; token?: string; fetch?: typeof fetch; timeoutMs?: number; now?: () => number });
  getPrevalence(options: QueryOptions & { start?: TimeArg; end?: TimeArg; groupBy?: string }): Promise<Prevalence>;
  /** GetPrevalence's groups for the label `groupBy`. */
  getBreakdown(options: QueryOptions & { groupBy: string; start?: TimeArg; end?: TimeArg }): Promise<Prevalence[]>;
  /** Default range: the last 30 days to now; bucket DAY. */
  getSeries(options: QueryOptions & { start?: TimeArg; end?: TimeArg; bucket?: 'HOUR' | 'DAY' | 'WEEK' }): Promise<Series>;
  getDifference(options: Omit<QueryOptions, 'method' | 'simultaneous' | 'interval' | 'anytimeTunedReports'> & {
    first: [TimeArg | undefined, TimeArg | undefined]; second: [TimeArg | undefined, TimeArg | undefined];
    metric2?: string;
  }): Promise<Difference>;
  /** GetTopValues of a heavy-hitters metric: the common values found with no candidates. */
  getTopValues(options: { metric: string; start?: TimeArg; end?: TimeArg; level?: number; maxPrefixes?: number }): Promise<TopValues>;
  /** GetFrequencies: the shares of given values (strings as UTF-8, or bytes). Rejects
   * INVALID_ARGUMENT "values[i]: ..." for a value that is not a string or bytes. */
  getFrequencies(options: {
    metric: string; values: (string | Uint8Array)[]; start?: TimeArg; end?: TimeArg; level?: number;
    estimationGroupOnly?: boolean;
  }): Promise<TopValues>;
}
