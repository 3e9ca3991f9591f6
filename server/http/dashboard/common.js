// The dashboard's shared state and its formatting: numbers from either JSON form, labels in
// words (docs/dashboard.md).
"use strict";

const $ = (id) => document.getElementById(id);
const HOUR = 3600;
const DAY = 24 * HOUR;
const state = { metric: null, metrics: [], tables: {} };

function token() { return sessionStorage.getItem("deniable.token") || ""; }

// ---- Numbers: the API's old form (int64 as strings, suppressed estimates as 0) and new form
// (numbers, null) both read as numbers or null.
function num(v) {
  if (v === null || v === undefined || v === "") return null;
  const x = Number(v);
  return Number.isFinite(x) ? x : null;
}
const pct = (v) => (num(v) === null ? "—" : (num(v) * 100).toFixed(2) + " %");
const count = (v) => (num(v) === null ? "—" : String(num(v)));
// Rounds to `digits` significant digits for display (the raw value goes into a tooltip).
const round = (v, digits) => (num(v) === null ? "—" : String(Number(num(v).toPrecision(digits || 4))));
// A difference in percentage points with its sign: "+1.66", "−1.66", "0.00".
function points(v) {
  const x = num(v) * 100;
  const text = Math.abs(x).toFixed(2);
  return (Number(text) === 0 ? "" : x > 0 ? "+" : "\u2212") + text;
}
// The server's sentences with long decimals ("level 0.987259") rounded to 4 significant digits.
function roundProse(text) { return String(text).replace(/\d+\.\d{5,}/g, (m) => round(m, 4)); }
function interval(lo, hi) { return `[${pct(lo)}, ${pct(hi)}]`; }
// A bucket, group or prevalence without an estimate (too few reports): the old form sets
// `suppressed` (estimates 0, method INTERVAL_METHOD_UNSPECIFIED), the new one also gives null.
function suppressed(p) {
  return !p || p.suppressed === true || (!(p.shares && p.shares.length) && num(p.estimateUnbiased) === null);
}

// ---- Human labels, with the raw names in tooltips.
const DESIGN_NAMES = { twoCoin: "two coins", forcedResponse: "forced response", symmetricEpsilon: "symmetric (epsilon)",
  tailsSaysYes: "tails says yes", unrelatedQuestion: "unrelated question", mirroredQuestion: "mirrored question",
  truthWithGamma: "truth with probability gamma", categorical: "categorical" };
const METHOD_NAMES = { WILSON: "Wilson", WALD: "Wald", AGRESTI_COULL: "Agresti-Coull", JEFFREYS: "Jeffreys",
  CLOPPER_PEARSON: "Clopper-Pearson", INTERVAL_METHOD_UNSPECIFIED: "none" };
const VALUE_NAMES = {
  period_prevalence: "the prevalence among the devices reporting in one reporting period",
  mean_period_prevalence: "the mean of the reporting periods' prevalences, weighted by their reports",
  active_device_prevalence: "the share among the devices active in the window, each counted once",
  mean_window_prevalence: "the mean of the windows' active-device shares, weighted by their devices (n counts device-windows)",
  precision_weighted_prevalence: "the prevalence with design versions weighted by precision",
  single_version: "one design version", by_reports: "design versions combined by their reports",
  inverse_variance: "design versions combined by precision (inverse variance)",
  independent_devices: "one period: reports from distinct devices",
  minkowski: "several periods: an upper bound whatever one device's reports have in common",
  requested: "the one you chose",
};
function humanize(raw) {
  if (raw === undefined || raw === null) return "";
  const s = String(raw);
  return VALUE_NAMES[s] || s.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ").toLowerCase();
}
function designKey(design) { return Object.keys((design && design.parameters) || {})[0] || ""; }
function designName(design) { const k = designKey(design); return DESIGN_NAMES[k] || humanize(k) || "?"; }
function methodName(m) { return METHOD_NAMES[m] || humanize(m); }
const levelText = (v) => `${Number((num(v) * 100).toFixed(2))} %`;
function utc(seconds) { return new Date(Number(seconds) * 1000).toISOString().slice(0, 16).replace("T", " "); }
// A bucket's start as the chart's axis shows it: the date, and the hour for hourly buckets.
function bucketLabel(seconds) { return state.bucket === "HOUR" ? utc(seconds).slice(5) : utc(seconds).slice(0, 10); }
