// The live view (issue 41): the selected metric's estimate from the start of its current
// reporting period (a survey question: from its first report) until now, refreshed every N
// seconds, with ANYTIME intervals (confidence sequences, docs/statistics.md section 10): they
// hold at every look at once, so watching them refresh is sound, where a fixed-n interval looked
// at again and again misses the truth far more often than its level says. The fixed-n view
// stays the default; the live one is switched on with its checkbox (kept in the address).
// Loaded after common.js, panels.js and view.js, before dashboard.js (index.html).
"use strict";

// The docs section, served by the collector with the page (docs/statistics.md, embedded).
const LIVE_DOCS = "statistics.md#:~:text=10.%20Intervals%20valid%20at%20every%20look";
const live = { timer: null, looks: 0 };

// Seconds between looks: the input's whole number, at least 1.
function liveEvery() {
  const s = Math.floor(Number($("live-every").value));
  if (!Number.isFinite(s) || s < 1 || s > 3600) throw new Error("live: refresh every 1 to 3600 seconds");
  return s;
}
// The live selection's fixed start: the current reporting period's (aligned to the Unix epoch),
// or 0 for a survey question (each device reports once: every selection holds distinct devices).
function liveStart(m, nowSeconds) {
  if (m.reportingOnce) return 0;
  const period = num(m.reportingPeriodSeconds) || DAY;
  return Math.floor(nowSeconds / period) * period;
}
function liveAvailable() { return !!state.metric && !isHeavyHitters(); }

function clearLive() {
  for (const id of ["live-selection", "live-figures"]) { $(id).textContent = ""; delete $(id).dataset.start; }
  delete $("live-figures").dataset.kind;
  clearTable("live-table");
}
function liveFigure(id, label, text, data, title) {
  const dt = document.createElement("dt"); dt.textContent = label;
  const dd = document.createElement("dd"); dd.id = id; dd.textContent = text;
  for (const [k, v] of Object.entries(data || {})) if (v !== null && v !== undefined) dd.dataset[k] = v;
  if (title) dd.title = title;
  $("live-figures").append(dt, dd);
  return dd;
}

function stopLive() {
  if (live.timer !== null) clearTimeout(live.timer);
  live.timer = null;
}
// Starts (or restarts, for a new metric) the looks when the checkbox is on; else stops them.
function syncLive() {
  stopLive();
  const on = $("live").checked && liveAvailable();
  $("live-panel").hidden = !on;
  $("live-controls").hidden = !liveAvailable();
  if (!on) { idle("live"); return null; }
  live.looks = 0;
  return liveLook();
}

// One look: the estimate with ANYTIME intervals; the next look is scheduled when it is answered
// (or refused), so looks never pile up behind a slow collector.
async function liveLook() {
  stopLive();
  const gen = begin("live");
  const metric = state.metric, m = metricInfo();
  let every = 10;
  try {
    every = liveEvery();
    const start = liveStart(m, Math.floor(Date.now() / 1000));
    const request = { metric, startTimeSeconds: String(start), interval: "ANYTIME", confidenceLevel: Number($("level").value) };
    const p = await api("QueryService/GetPrevalence", request);
    if (!current("live", gen)) return;
    live.looks += 1;
    showLive(p, m, start, every);
    ready("live", gen);
  } catch (e) {
    fail("live", gen, e);
  }
  if (current("live", gen) && $("live").checked && state.metric === metric) {
    live.timer = setTimeout(liveLook, every * 1000);
  }
}

function showLive(p, m, start, every) {
  const sel = $("live-selection");
  sel.textContent = (m.reportingOnce ? "From the first report (a survey question: each device answers once) "
    : `From ${utc(start)} UTC (the start of the current reporting period) `) + `until now; look ${live.looks}, at ${new Date().toISOString().slice(11, 19)} UTC, the next in ${every} s. ` +
    `Tuned at ${count(p.anytimeTunedReports)} reports; a new period (or design version) starts a new sequence.`;
  sel.dataset.start = start;
  sel.dataset.looks = live.looks;
  const figures = $("live-figures");
  figures.dataset.kind = p.intervalKind || "";
  const level = levelText(p.confidenceLevel);
  liveFigure("live-n", "reports (n)", count(p.n), { value: num(p.n) });
  if (p.numeric && !isHistogram(p)) {
    const e = p.numeric;
    liveFigure("live-estimate", "mean", valueText(e.mean, e) + unitText(e), { value: num(e.mean) });
    liveFigure("live-interval", `${level} anytime interval of the mean`, valueInterval(e.meanCiLower, e.meanCiUpper, e) + unitText(e),
      { lower: num(e.meanCiLower), upper: num(e.meanCiUpper) });
  } else if (p.numeric) {
    const e = p.numeric, buckets = e.buckets || [];
    liveRows(buckets.map((b, i) => ({ name: bucketName(b, i, buckets, e), s: b })), `bucket${unitHeader(e)}`, level);
  } else if (p.shares && p.shares.length) {
    liveRows(p.shares.map((s) => ({ name: s.category, s })), "category", level);
  } else {
    liveFigure("live-estimate", "estimate", pct(p.estimateUnbiased), { value: num(p.estimateUnbiased) });
    liveFigure("live-interval", `${level} anytime interval`, interval(p.ciLower, p.ciUpper), { lower: num(p.ciLower), upper: num(p.ciUpper) });
  }
  showManipulation(p, liveFigure("live-manipulation", "manipulation bound", ""));
}
// Category shares or histogram buckets: each one's anytime interval, and all of them together
// (Bonferroni: each at 1 - alpha / k).
function liveRows(rows, what, level) {
  fillTable("live-table", [what, { name: "estimate", cls: "num" }, { name: `${level} anytime interval (this one)`, cls: "num" },
    { name: `${level} anytime interval (all together, Bonferroni)`, cls: "num" }],
  rows.map(({ name, s }) => ({ data: { name },
    csv: [name, num(s.estimateUnbiased), num(s.ciLower), num(s.ciUpper), num(s.simultaneousLower), num(s.simultaneousUpper)],
    cells: [{ text: name }, { text: pct(s.estimateUnbiased), cls: "num", data: { value: num(s.estimateUnbiased) } },
      { text: interval(s.ciLower, s.ciUpper), cls: "num", data: { lower: num(s.ciLower), upper: num(s.ciUpper) } },
      { text: interval(s.simultaneousLower, s.simultaneousUpper), cls: "num", data: { lower: num(s.simultaneousLower), upper: num(s.simultaneousUpper) } }] })));
  state.tables["live-table"].columns = [what, "estimate_unbiased", "ci_lower", "ci_upper", "simultaneous_lower", "simultaneous_upper"];
}
