// The view kept in the address's hash, the time range, and the options every query carries.
"use strict";

// ---- The view in the address: #metric=..&range=7d&bucket=DAY&by=region&method=WILSON&level=0.95
const VIEW_FIELDS = { range: "range", from: "range-from", to: "range-to", bucket: "bucket", by: "group-by",
  method: "method", level: "level", sim: "simultaneous", split: "diff-split", every: "live-every" };
function saveView() {
  const params = new URLSearchParams();
  if (state.metric) params.set("metric", state.metric);
  for (const [key, id] of Object.entries(VIEW_FIELDS)) {
    if ((key === "from" || key === "to") && $("range").value !== "custom") continue;
    if (key === "every" && !$("live").checked) continue;
    if ($(id).value) params.set(key, $(id).value);
  }
  if ($("live").checked) params.set("live", "1");
  const hash = "#" + params.toString();
  if (location.hash !== hash) history.replaceState(null, "", hash);
}
// Sets the controls from the address; returns the metric it names (or null).
function restoreView() {
  const params = new URLSearchParams(location.hash.slice(1));
  for (const [key, id] of Object.entries(VIEW_FIELDS)) {
    const v = params.get(key);
    if (v === null) continue;
    const el = $(id);
    if (el.tagName === "SELECT" && ![...el.options].some((o) => o.value === v)) continue;
    el.value = v;
  }
  $("custom-range").hidden = $("range").value !== "custom";
  $("live").checked = params.get("live") === "1";
  return params.get("metric");
}

// ---- The time range: [start, end) in Unix seconds, relative ranges ending at the end of the
// current hour (reports' event times are rounded to the hour).
const SPANS = { "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY, "90d": 90 * DAY };
function parseUtc(value) { const t = Date.parse(value + "Z"); return Number.isFinite(t) ? Math.floor(t / 1000) : null; }
function timeRange() {
  const key = $("range").value;
  if (key === "custom") {
    const start = parseUtc($("range-from").value), end = parseUtc($("range-to").value);
    if (start === null || end === null) throw new Error("time range: give both ends of the custom range (UTC)");
    if (end <= start) throw new Error("time range: the end must come after the start");
    return { start, end };
  }
  const end = (Math.floor(Date.now() / 1000 / HOUR) + 1) * HOUR;
  return { start: end - (SPANS[key] || SPANS["30d"]), end };
}
function rangeRequest() { const r = timeRange(); return { startTimeSeconds: String(r.start), endTimeSeconds: String(r.end) }; }
function showRange() {
  let text = "";
  try {
    const r = timeRange();
    text = `${utc(r.start)} to ${utc(r.end)} UTC`;
    $("range-text").dataset.start = r.start;
    $("range-text").dataset.end = r.end;
  } catch (e) {
    text = e.message;
  }
  $("range-text").textContent = text;
}
function bucketWidth() {
  if ($("bucket").value) return $("bucket").value;
  const r = timeRange(), span = r.end - r.start;
  return span <= 2 * DAY ? "HOUR" : span <= 120 * DAY ? "DAY" : span <= 730 * DAY ? "WEEK" : "MONTH";
}

function queryOptions() {
  const options = { confidenceLevel: Number($("level").value), ...rangeRequest() };
  if ($("method").value) options.method = $("method").value;  // else the server's default
  if (isCategorical()) options.simultaneous = $("simultaneous").value;
  return options;
}
function metricInfo() { return state.metrics.find((x) => x.name === state.metric); }
// The selected metric's category names; empty for a yes/no metric.
function categories() { const m = metricInfo(); return (m && m.categories) || []; }
function isCategorical() { return categories().length > 0; }
// A numeric metric (issue 28) has the range of its values.
function isNumeric() { const m = metricInfo(); return !!(m && m.range); }
