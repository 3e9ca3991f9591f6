// The Deniable dashboard: plain JavaScript over the collector's JSON API (docs/http.md,
// docs/dashboard.md). Every number shown comes from the answer to the panel's newest request:
// a panel is emptied the moment its request starts and stays empty (with the error) if it fails.
// Each displayed figure keeps the raw value in its data-value attribute. The token is kept in
// sessionStorage (gone when the tab closes); the view is kept in the address's hash.
// Loaded after common.js, panels.js, charts.js and view.js (index.html), whose names it uses.
"use strict";

// How each panel is emptied (panels.js: begin, fail, idle).
const CLEAR = {
  metrics: () => {},
  prevalence: clearPrevalence,
  series: () => { destroyChart("series-chart"); clearTable("series-table"); $("series-legend").textContent = ""; },
  groups: () => { destroyChart("groups-chart"); clearTable("groups-table"); $("groups-legend").textContent = ""; },
  diff: () => { $("diff-result").textContent = ""; delete $("diff-result").dataset.value; clearTable("diff-shares"); },
  design: () => { $("design-figures").innerHTML = ""; $("plan").innerHTML = ""; },
  top: clearTop,
  live: clearLive,
};
// The panels of a yes/no, categorical or numeric metric; a heavy-hitters metric has the top
// values instead (top.js).
const ESTIMATE_PANELS = ["prevalence", "series", "groups", "diff"];
const NOT_FOR_STRINGS = "not for a heavy-hitters metric (its values are strings): see its top values";

// ---- Metrics list.
async function loadMetrics(wanted) {
  const gen = begin("metrics");
  let answer;
  try {
    answer = await api("QueryService/ListMetrics", {});
  } catch (e) {
    state.metrics = [];
    drawMetrics();
    stopLive();
    for (const p of ["prevalence", "series", "groups", "diff", "design", "top", "live"]) idle(p);
    $("detail").hidden = true;
    fail("metrics", gen, e);
    return;
  }
  if (!current("metrics", gen)) return;
  state.metrics = answer.metrics || [];
  drawMetrics();
  if (state.metrics.length === 0) setStatus("metrics", "ready", "No metrics yet: create one with deniable create-metric.");
  else ready("metrics", gen);
  const name = wanted || state.metric;
  if (name && state.metrics.some((m) => m.name === name)) selectMetric(name);
  else loadDesign();
}
let countsRequest = 0;
function drawMetrics() {
  const request = ++countsRequest;
  fillTable("metrics", ["metric", "question", "design", { name: "version", cls: "num" }, { name: "epsilon (nats)", cls: "num" },
    { name: "reports", cls: "num", title: "reports in the time range", csv: "reports_in_range" }],
  state.metrics.map((m) => {
    const k = (m.categories || []).length;
    return { data: { metric: m.name }, cells: [
      { text: m.name }, { text: m.description || "" },
      { text: designName(m.design) + (k ? ` (${k} categories)` : "") + (m.range ? ` (${numericDesignText(m)})` : ""), title: designKey(m.design), raw: designKey(m.design) },
      { text: String(m.design.version), cls: "num" },
      { text: m.design.epsilonInfinite ? "infinite" : round(m.design.epsilon, 5), cls: "num", title: String(m.design.epsilon), raw: m.design.epsilonInfinite ? "inf" : m.design.epsilon },
      { text: "\u2026", cls: "num reports", raw: "" }] };
  }));
  const body = $("metrics").tBodies[0];
  [...body.rows].forEach((row, i) => {
    const m = state.metrics[i];
    row.classList.toggle("selected", m.name === state.metric);
    row.addEventListener("click", () => selectMetric(m.name));
    const n = row.querySelector(".reports");
    let range;
    try { range = rangeRequest(); } catch (e) { n.textContent = "—"; return; }
    // A heavy-hitters metric has no prevalence: its devices are those of its top values' answer.
    const strings = designKey(m.design) === "heavyHitters";
    (strings ? api("QueryService/GetTopValues", { metric: m.name, maxPrefixes: 1, ...range }).then((t) => ({ n: t.devices }))
      : api("QueryService/GetPrevalence", { metric: m.name, ...range }))
      .then((p) => { if (request !== countsRequest) return; n.textContent = count(p.n); n.dataset.value = num(p.n); state.tables.metrics.rows[i][5] = num(p.n); })
      .catch((e) => {
        if (request !== countsRequest) return;
        n.textContent = e.message.includes("FAILED_PRECONDITION") ? "too few" : "error";
        n.title = e.message;
      });
  });
}

function selectMetric(name) {
  state.metric = name;
  for (const row of $("metrics").tBodies[0].rows) row.classList.toggle("selected", row.dataset.metric === name);
  const m = metricInfo() || {};
  $("metric-name").textContent = name;
  $("metric-question").textContent = m.description || "";
  $("detail").hidden = false;
  const categorical = isCategorical(), numeric = isNumeric(), strings = isHeavyHitters();
  for (const p of ESTIMATE_PANELS) panelElement(p).hidden = strings;
  $("top-panel").hidden = !strings;
  $("method").parentElement.hidden = strings;
  for (const el of document.querySelectorAll("#prevalence .yes-no")) el.hidden = categorical || numeric;
  $("shares").hidden = !categorical;
  $("numeric").hidden = !numeric;
  $("numeric-figures").hidden = !numeric;
  // A number has a mean or a distribution, not a prevalence.
  const mechanism = numeric && ((m.design || {}).parameters || {}).numeric ? m.design.parameters.numeric.mechanism : "";
  $("metric-kind").textContent = strings ? "Top values" : !numeric ? "Prevalence" : mechanism === "D_BIT_FLIP" ? "Distribution" : "Mean";
  saveView();
  return loadAll();
}
function loadAll() {
  showRange();
  if (!state.metric) return loadDesign();
  if (isHeavyHitters()) {
    for (const p of ESTIMATE_PANELS) idle(p, NOT_FOR_STRINGS);
    return Promise.all([loadTop(), loadDesign(), syncLive()]);
  }
  idle("top");
  // The difference runs once a split time is chosen (Compare, or a link that holds one).
  const diff = $("diff-split").value ? loadDifference() : idle("diff", "choose where the first window ends and press Compare");
  return Promise.all([loadPrevalence(), loadSeries(), loadGroups(), diff, loadDesign(), syncLive()]);
}

// ---- Prevalence (and a categorical metric's shares).
function setFigure(id, text, value, title) {
  const el = $(id);
  el.textContent = text;
  el.dataset.value = value === undefined || value === null ? "" : String(value);
  if (title) el.title = title; else el.removeAttribute("title");
}
function clearPrevalence() {
  for (const dd of document.querySelectorAll("#prevalence dd")) { dd.textContent = ""; dd.dataset.value = ""; dd.removeAttribute("title"); }
  $("p-extra").innerHTML = "";
  $("shares-legend").textContent = "";
  delete $("shares-legend").dataset.method;
  delete $("shares-legend").dataset.perCategoryLevel;
  destroyChart("shares-chart");
  clearTable("shares-table");
  clearNumeric();
}
function methodText(p) {
  const chosen = p.methodReason === "requested";
  return `${methodName(p.method)} at ${levelText(p.confidenceLevel)}${p.methodReason ? (chosen ? " (your choice)" : " (the design's default)") : ""}`;
}

async function loadPrevalence() {
  if (isHeavyHitters()) return idle("prevalence", NOT_FOR_STRINGS);
  const gen = begin("prevalence");
  try {
    const p = await api("QueryService/GetPrevalence", { metric: state.metric, ...queryOptions(),
      ...(isNumeric() ? { quantiles: NUMERIC_QUANTILES } : {}) });
    if (!current("prevalence", gen)) return;
    setFigure("p-n", count(p.n), num(p.n));
    setFigure("p-method", methodText(p), p.method, `${p.method}${p.methodReason ? ": " + p.methodReason : ""}`);
    setFigure("p-epsilon", round(p.epsilon, 5), p.epsilon, String(p.epsilon));
    setFigure("p-central", p.centralMethod === "shuffle_numerical"
      ? `${round(p.centralEpsilon, 5)} at delta = ${num(p.centralDelta) > 0 && num(p.centralDelta) < 1e-3 ? num(p.centralDelta).toExponential(0) : round(p.centralDelta)} over ${count(p.centralN)} reports, against an analyst who sees only counts`
      : `not amplified (local epsilon only)${p.centralNote ? ": " + roundProse(p.centralNote) : ""}`, p.centralEpsilon, p.centralMethod);
    if (p.numeric) showNumeric(p); else if (p.shares && p.shares.length) showShares(p); else showYesNo(p);
    showExtra(p);
    showManipulation(p);
    ready("prevalence", gen);
  } catch (e) {
    fail("prevalence", gen, e);
  }
}

function showYesNo(p) {
  const unbiased = num(p.estimateUnbiased), clipped = num(p.estimateClipped);
  setFigure("p-estimate", pct(unbiased) + (clipped !== null && clipped !== unbiased ? ` (clipped to [0, 1]: ${pct(clipped)})` : ""), unbiased);
  const iv = $("p-interval");
  iv.innerHTML = "";
  const lo = document.createElement("span"), hi = document.createElement("span");
  lo.id = "p-lower"; hi.id = "p-upper";
  lo.textContent = pct(p.ciLower); lo.dataset.value = num(p.ciLower);
  hi.textContent = pct(p.ciUpper); hi.dataset.value = num(p.ciUpper);
  iv.append("[", lo, ", ", hi, "]");
  setFigure("p-se", pct(p.standardError), p.standardError);
}

// How far fake reports could have moved the estimate (Prevalence.manipulation, docs/security.md
// "Manipulation bound"), as one sentence with m as the server served it: the yes/no estimate's,
// a one_bit_mean mean's (in its unit), or the most movable category share's or histogram
// bucket's (in percentage points). Null when the answer carries none (suppressed, or
// INVERSE_VARIANCE).
function manipulationOf(p) {
  let m = p.manipulation, points = true, what = "this estimate", fmt = (v) => (num(v) * 100).toFixed(2);
  const bound = (x) => num(x.manipulation && x.manipulation.bound) || 0;
  const most = (list) => list.reduce((a, x) => (bound(x) > bound(a) ? x : a), list[0]);
  if (p.numeric && !isHistogram(p)) {
    m = p.numeric.meanManipulation;
    points = false;
    what = "the mean";
    fmt = (v) => valueText(v, p.numeric);
  } else if (p.numeric) {
    const buckets = p.numeric.buckets || [];
    if (!buckets.length) return null;
    const b = most(buckets);
    m = b.manipulation;
    what = `the share of bucket ${bucketName(b, buckets.indexOf(b), buckets, p.numeric)} (the most movable)`;
  } else if (p.shares && p.shares.length) {
    const s = most(p.shares);
    m = s.manipulation;
    what = `the share "${s.category}" (the most movable)`;
  }
  if (!m || !num(m.fakeReports)) return null;
  const unit = points ? " points" : unitText(p.numeric);
  const honest = points ? `[${pct(m.honestLower)}, ${pct(m.honestUpper)}]` : `${valueInterval(m.honestLower, m.honestUpper, p.numeric)}${unit}`;
  return { m, text: `${count(m.fakeReports)} fake reports could move ${what} by at most ${fmt(m.bound)}${unit} ` +
      `(the honest reports' estimate is in ${honest})`,
    title: `up to ${fmt(m.shiftUp)}${unit} up or ${fmt(m.shiftDown)}${unit} down; for any reports at most ` +
      `${fmt(m.uniformBound)}${unit} (m (hi - lo) / n); m is 1 % of n unless the query asks for another` };
}
function showManipulation(p, dd) {
  dd = dd || $("p-manipulation");
  const x = manipulationOf(p);
  for (const k of ["value", "fakeReports", "lower", "upper"]) delete dd.dataset[k];
  if (!x) { dd.textContent = "\u2014"; dd.title = ""; return; }
  dd.textContent = x.text;
  dd.dataset.value = num(x.m.bound);
  dd.dataset.fakeReports = num(x.m.fakeReports);
  dd.dataset.lower = num(x.m.honestLower);
  dd.dataset.upper = num(x.m.honestUpper);
  dd.title = x.title;
}

// Fields some collectors add to Prevalence, shown in words with the raw name and value in tooltips.
const EXTRA_FIELDS = [["estimand", "estimate of"], ["periods", "reporting periods"], ["combination", "design versions"],
  ["varianceBound", "variance"], ["intervalConstruction", "interval built as"], ["methodReason", "why this method"],
  ["window", "window"], ["explanation", "counted"]];
function showExtra(p) {
  const extra = $("p-extra");
  extra.innerHTML = "";
  for (const [key, label] of EXTRA_FIELDS) {
    // A numeric answer's estimand in its own words (numeric.estimand: "active_device_mean"),
    // where a collector gives it; the yes/no name otherwise.
    const raw = key === "estimand" && p.numeric && p.numeric.estimand ? p.numeric.estimand : p[key];
    if (raw === "" || raw === undefined || raw === null) continue;
    const dt = document.createElement("dt"); dt.textContent = label; dt.title = key;
    const dd = document.createElement("dd");
    // The window sentence of docs/statistics.md section 4.4 is prose already: shown as written.
    dd.textContent = key === "periods" ? count(raw) : key === "explanation" ? raw : humanize(raw);
    if (key === "methodReason" || key === "intervalConstruction") dd.textContent = VALUE_NAMES[raw] || roundProse(raw);
    dd.title = `${raw === p[key] ? key : "numeric.estimand"}: ${raw}`;
    dd.dataset.field = key;
    dd.dataset.value = raw;
    extra.append(dt, dd);
  }
}

// A categorical metric's shares: bars of the unbiased estimate and of the consistent share,
// whiskers for the per-category and the simultaneous interval (the axis holds them all).
function showShares(p) {
  const shares = p.shares;
  const level = levelText(p.confidenceLevel);
  const method = p.simultaneousMethod === "bonferroni" ? "Bonferroni" : "Sidak";
  $("shares-legend").textContent = `Bars: unbiased estimate, and consistent share (${p.consistentMethod}: ` +
    `projected onto the simplex, never below 0, summing to 100 %). Thick whisker: ${level} interval of ` +
    `each category alone; thin whisker: simultaneous ${level} intervals (${method}, each at ` +
    `${levelText(p.perCategoryLevel)}: all ${shares.length} cover together).`;
  $("shares-legend").dataset.method = p.simultaneousMethod;
  $("shares-legend").dataset.perCategoryLevel = p.perCategoryLevel;
  const bounds = axisBounds(shares.flatMap((s) => [s.simultaneousLower, s.simultaneousUpper, s.ciLower, s.ciUpper, s.estimateUnbiased, s.estimateConsistent]));
  destroyChart("shares-chart");
  new Chart($("shares-chart"), {
    type: "bar",
    data: { labels: shares.map((s) => s.category),
      datasets: [
        { label: "unbiased estimate (%)", data: shares.map((s) => num(s.estimateUnbiased) * 100), backgroundColor: "rgba(54,112,196,0.6)" },
        { label: `consistent share, ${p.consistentMethod} (%)`, data: shares.map((s) => num(s.estimateConsistent) * 100), backgroundColor: "rgba(230,145,56,0.6)" },
      ] },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: "share (%)" }, min: bounds.min, max: bounds.max } },
      plugins: { shareWhiskers: { shares } } },
    plugins: [shareWhiskers],
  });
  fillTable("shares-table", ["category", { name: "supporting reports", cls: "num" }, { name: "unbiased estimate", cls: "num" },
    { name: "consistent share", cls: "num", title: p.consistentMethod }, { name: "standard error", cls: "num" },
    { name: "interval (this category)", cls: "num" }, { name: "simultaneous interval (all categories)", cls: "num" }],
  shares.map((s) => ({ data: { category: s.category },
    csv: [s.category, num(s.supportCount), num(s.estimateUnbiased), num(s.estimateConsistent), num(s.standardError), num(s.ciLower), num(s.ciUpper), num(s.simultaneousLower), num(s.simultaneousUpper)],
    cells: [{ text: s.category }, { text: count(s.supportCount), cls: "num count", data: { value: num(s.supportCount) } },
      { text: pct(s.estimateUnbiased), cls: "num", data: { value: num(s.estimateUnbiased) } },
      { text: pct(s.estimateConsistent), cls: "num", data: { value: num(s.estimateConsistent) } },
      { text: pct(s.standardError), cls: "num", data: { value: num(s.standardError) } },
      { text: interval(s.ciLower, s.ciUpper), cls: "num", data: { lower: num(s.ciLower), upper: num(s.ciUpper) } },
      { text: interval(s.simultaneousLower, s.simultaneousUpper), cls: "num", data: { lower: num(s.simultaneousLower), upper: num(s.simultaneousUpper) } }] })));
  // The CSV header splits the interval columns into their ends.
  state.tables["shares-table"].columns = ["category", "supporting_reports", "estimate_unbiased", "estimate_consistent", "standard_error",
    "ci_lower", "ci_upper", "simultaneous_lower", "simultaneous_upper"];
}

// ---- Series.
async function loadSeries() {
  if (isHeavyHitters()) return idle("series", NOT_FOR_STRINGS);
  const gen = begin("series");
  let series, bucket;
  try {
    bucket = bucketWidth();
    series = await api("QueryService/GetSeries", { metric: state.metric, bucket, ...queryOptions() });
  } catch (e) {
    fail("series", gen, e);
    return;
  }
  if (!current("series", gen)) return;
  const buckets = series.buckets || [];
  state.bucket = bucket;
  if (isNumeric()) drawNumericSeries(buckets); else if (isCategorical()) drawShareSeries(buckets); else drawSeries(buckets);
  $("series-chart").dataset.buckets = String(buckets.length);
  $("series-chart").dataset.bucket = bucket;
  if (buckets.length === 0) setStatus("series", "ready", "no reports in the time range");
  else ready("series", gen);
}

function drawSeries(buckets) {
  $("series-legend").textContent = "Line: estimate; shaded band: its interval; \u25B2 suppressed bucket (too few reports); dashed line: new design version.";
  const value = (b, f) => (suppressed(b) ? null : num(b[f]) * 100);
  const shown = buckets.filter((b) => !suppressed(b));
  const bounds = axisBounds(shown.flatMap((b) => [b.ciLower, b.ciUpper, b.estimateUnbiased]));
  const data = {
    labels: buckets.map((b) => bucketLabel(b.startTimeSeconds)),
    datasets: [
      { label: "interval upper", data: buckets.map((b) => value(b, "ciUpper")), borderWidth: 0, pointRadius: 0, fill: "+1", backgroundColor: "rgba(54,112,196,0.2)" },
      { label: "interval lower", data: buckets.map((b) => value(b, "ciLower")), borderWidth: 0, pointRadius: 0, fill: false },
      { label: "estimate", data: buckets.map((b) => value(b, "estimateUnbiased")), borderColor: "#1f4e96", backgroundColor: "#1f4e96", fill: false, spanGaps: false },
      { ...SUPPRESSED_MARK, data: buckets.map((b) => (suppressed(b) ? 0 : null)) },
    ],
  };
  destroyChart("series-chart");
  new Chart($("series-chart"), {
    type: "line", data,
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: "prevalence (%)" }, min: bounds.min, max: bounds.max } },
      plugins: { legend: { labels: { filter: (item) => !item.text.startsWith("interval") } }, versionMarks: { indexes: designMarks(buckets) } } },
    plugins: [versionMarks],
  });
  fillTable("series-table", ["bucket start (UTC)", { name: "n", cls: "num" }, { name: "estimate", cls: "num" }, { name: "interval", cls: "num" }, "design"],
    buckets.map((b) => {
      const off = suppressed(b);
      return { data: { start: num(b.startTimeSeconds) },
        csv: [num(b.startTimeSeconds), num(b.n), off ? null : num(b.estimateUnbiased), off ? null : num(b.ciLower), off ? null : num(b.ciUpper), b.design ? b.design.version : null],
        cells: [{ text: utc(b.startTimeSeconds) }, { text: count(b.n), cls: "num count" },
          { text: off ? "suppressed" : pct(b.estimateUnbiased), cls: "num", data: { value: off ? "" : num(b.estimateUnbiased) } },
          { text: off ? "" : interval(b.ciLower, b.ciUpper), cls: "num", data: off ? {} : { lower: num(b.ciLower), upper: num(b.ciUpper) } },
          { text: b.design ? "v" + b.design.version : "" }] };
    }));
  state.tables["series-table"].columns = ["start_time_seconds", "n", "estimate_unbiased", "ci_lower", "ci_upper", "design_version"];
}

// A categorical metric's series: one line per category from the consistent shares (never below
// 0, summing to 100 %), each with its own interval band in its colour (clipped to [0, 100] %).
function drawShareSeries(buckets) {
  const names = categories();
  const level = levelText($("level").value);
  $("series-legend").textContent = `One line per category: its consistent share (norm_sub: never below 0, summing to 100 %); ` +
    `shaded band in the line's colour: that category's ${level} interval (clipped to 0-100 %); ` +
    "\u25B2 suppressed bucket (too few reports); dashed line: new design version. Click a category to hide its line and band.";
  const share = (b, v) => (suppressed(b) || !b.shares || !b.shares[v] ? null : b.shares[v]);
  const clip = (x) => Math.min(100, Math.max(0, num(x) * 100));
  const datasets = [];
  names.forEach((name, v) => {
    datasets.push({ label: `${name} interval upper`, category: v, data: buckets.map((b) => (share(b, v) ? clip(share(b, v).ciUpper) : null)),
      borderWidth: 0, pointRadius: 0, fill: "+1", backgroundColor: categoryColor(v, 0.13) });
    datasets.push({ label: `${name} interval lower`, category: v, data: buckets.map((b) => (share(b, v) ? clip(share(b, v).ciLower) : null)),
      borderWidth: 0, pointRadius: 0, fill: false });
  });
  names.forEach((name, v) => datasets.push({ label: name, category: v, line: true,
    data: buckets.map((b) => (share(b, v) ? clip(share(b, v).estimateConsistent) : null)),
    borderColor: categoryColor(v), backgroundColor: categoryColor(v), fill: false, spanGaps: false }));
  datasets.push({ ...SUPPRESSED_MARK, data: buckets.map((b) => (suppressed(b) ? 0 : null)) });
  const bounds = axisBounds(datasets.filter((d) => d.category !== undefined).flatMap((d) => d.data.map((y) => (y === null ? null : y / 100))));
  destroyChart("series-chart");
  new Chart($("series-chart"), {
    type: "line", data: { labels: buckets.map((b) => bucketLabel(b.startTimeSeconds)), datasets },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: "share (%)" }, min: bounds.min, max: bounds.max } },
      plugins: {
        legend: { labels: { filter: (item) => !item.text.includes(" interval ") },
          // A category's line and its band are shown or hidden together.
          onClick: (event, item, legend) => {
            const chart = legend.chart, clicked = chart.data.datasets[item.datasetIndex];
            const hide = chart.isDatasetVisible(item.datasetIndex);
            chart.data.datasets.forEach((d, i) => {
              if (i === item.datasetIndex || (clicked.category !== undefined && d.category === clicked.category)) chart.setDatasetVisibility(i, !hide);
            });
            chart.update();
          } },
        versionMarks: { indexes: designMarks(buckets) } } },
    plugins: [versionMarks],
  });
  fillTable("series-table", ["bucket start (UTC)", { name: "n", cls: "num" },
    ...names.map((n) => ({ name: `${n}: share [interval]`, cls: "num", title: "consistent share (norm_sub) and the category's interval" })), "design"],
  buckets.map((b) => ({ data: { start: num(b.startTimeSeconds) },
    csv: [num(b.startTimeSeconds), num(b.n), ...names.flatMap((n, v) => {
      const s = share(b, v);
      return s ? [num(s.estimateConsistent), num(s.estimateUnbiased), num(s.ciLower), num(s.ciUpper)] : [null, null, null, null];
    }), b.design ? b.design.version : null],
    cells: [{ text: utc(b.startTimeSeconds) }, { text: count(b.n), cls: "num count" },
      ...names.map((name, v) => {
        const s = share(b, v);
        if (!s) return { text: suppressed(b) ? "suppressed" : "", cls: "num", data: { category: name } };
        return { text: `${pct(s.estimateConsistent)} ${interval(s.ciLower, s.ciUpper)}`, cls: "num",
          title: `unbiased estimate ${pct(s.estimateUnbiased)}`,
          data: { category: name, value: num(s.estimateConsistent), unbiased: num(s.estimateUnbiased), lower: num(s.ciLower), upper: num(s.ciUpper) } };
      }),
      { text: b.design ? "v" + b.design.version : "" }] })));
  state.tables["series-table"].columns = ["start_time_seconds", "n",
    ...names.flatMap((n) => [`${n}_consistent`, `${n}_unbiased`, `${n}_ci_lower`, `${n}_ci_upper`]), "design_version"];
}

// ---- Breakdown by a label.
async function loadGroups() {
  const key = $("group-by").value.trim();
  if (isHeavyHitters()) return idle("groups", NOT_FOR_STRINGS);
  if (!key) { idle("groups", "give a label name to break the figures down by"); return; }
  const gen = begin("groups");
  let p;
  try {
    p = await api("QueryService/GetPrevalence", { metric: state.metric, groupBy: key, ...queryOptions() });
  } catch (e) {
    fail("groups", gen, e);
    return;
  }
  if (!current("groups", gen)) return;
  const groups = p.groups || [];
  if (isNumeric()) drawNumericGroups(key, groups); else if (isCategorical()) drawShareGroups(key, groups); else drawGroups(key, groups);
  if (groups.length === 1 && !groups[0].groupValue) {
    setStatus("groups", "ready", `no report carries the label "${key}": one group without a value holds every report`);
    return;
  }
  ready("groups", gen);
}

function drawGroups(key, groups) {
  const name = (g) => (g.groupValue || "(no value)") + (suppressed(g) ? " (suppressed)" : "");
  const shown = groups.filter((g) => !suppressed(g));
  const bounds = axisBounds(shown.flatMap((g) => [g.ciLower, g.ciUpper, g.estimateUnbiased]));
  $("groups-legend").textContent = `Bars: estimate by ${key}; whiskers: ${levelText($("level").value)} interval; suppressed groups have too few reports.`;
  destroyChart("groups-chart");
  new Chart($("groups-chart"), {
    type: "bar",
    data: { labels: groups.map(name),
      datasets: [{ label: "estimate (%) by " + key, data: groups.map((g) => (suppressed(g) ? null : num(g.estimateUnbiased) * 100)), backgroundColor: "rgba(54,112,196,0.6)" }] },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: "prevalence (%)" }, min: bounds.min, max: bounds.max } },
      plugins: { whiskers: { intervals: groups.map((g) => (suppressed(g) ? null : [num(g.ciLower), num(g.ciUpper)])) } } },
    plugins: [whiskers],
  });
  fillTable("groups-table", [key, { name: "n", cls: "num" }, { name: "estimate", cls: "num" }, { name: "interval", cls: "num" }],
    groups.map((g) => {
      const off = suppressed(g);
      return { data: { group: g.groupValue },
        csv: [g.groupValue, num(g.n), off ? null : num(g.estimateUnbiased), off ? null : num(g.ciLower), off ? null : num(g.ciUpper)],
        cells: [{ text: g.groupValue || "(no value)" }, { text: count(g.n), cls: "num count", data: { value: num(g.n) } },
          { text: off ? "suppressed" : pct(g.estimateUnbiased), cls: "num", data: { value: off ? "" : num(g.estimateUnbiased) } },
          { text: off ? "" : interval(g.ciLower, g.ciUpper), cls: "num", data: off ? {} : { lower: num(g.ciLower), upper: num(g.ciUpper) } }] };
    }));
  state.tables["groups-table"].columns = [key, "n", "estimate_unbiased", "ci_lower", "ci_upper"];
}

// A categorical metric by label: grouped bars (one colour per category) with the simultaneous
// interval as whiskers, and a table with each group's estimate and simultaneous interval.
function drawShareGroups(key, groups) {
  const names = categories();
  const share = (g, v) => (suppressed(g) || !g.shares || !g.shares[v] ? null : g.shares[v]);
  const all = groups.flatMap((g) => names.map((n, v) => share(g, v)).filter(Boolean));
  const bounds = axisBounds(all.flatMap((s) => [s.simultaneousLower, s.simultaneousUpper, s.estimateUnbiased]));
  $("groups-legend").textContent = `Bars: each category's unbiased estimate by ${key}; whiskers: simultaneous ${levelText($("level").value)} intervals.`;
  destroyChart("groups-chart");
  new Chart($("groups-chart"), {
    type: "bar",
    data: { labels: groups.map((g) => (g.groupValue || "(no value)") + (suppressed(g) ? " (suppressed)" : "")),
      datasets: names.map((name, v) => ({ label: name, backgroundColor: categoryColor(v, 0.7),
        data: groups.map((g) => (share(g, v) ? num(share(g, v).estimateUnbiased) * 100 : null)) })) },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: `share (%) by ${key}` }, min: bounds.min, max: bounds.max } },
      plugins: { groupWhiskers: { groups, names } } },
    plugins: [groupWhiskers],
  });
  fillTable("groups-table", [key, { name: "n", cls: "num" }, ...names.map((n) => ({ name: `${n}: estimate [simultaneous interval]`, cls: "num" }))],
    groups.map((g) => ({ data: { group: g.groupValue },
      csv: [g.groupValue, num(g.n), ...names.flatMap((n, v) => {
        const s = share(g, v);
        return s ? [num(s.estimateUnbiased), num(s.simultaneousLower), num(s.simultaneousUpper)] : [null, null, null];
      })],
      cells: [{ text: g.groupValue || "(no value)" }, { text: count(g.n), cls: "num count", data: { value: num(g.n) } },
        ...names.map((name, v) => {
          const s = share(g, v);
          if (!s) return { text: suppressed(g) ? "suppressed" : "", cls: "num", data: { category: name } };
          return { text: `${pct(s.estimateUnbiased)} ${interval(s.simultaneousLower, s.simultaneousUpper)}`, cls: "num",
            data: { category: name, value: num(s.estimateUnbiased), lower: num(s.simultaneousLower), upper: num(s.simultaneousUpper) } };
        })] })));
  state.tables["groups-table"].columns = [key, "n", ...names.flatMap((n) => [`${n}_unbiased`, `${n}_simultaneous_lower`, `${n}_simultaneous_upper`])];
}
// ---- Difference between two windows of the time range, stated as second minus first.
// The API's `difference` is first - second (proto); the page reads its orientation from the two
// estimates, so a collector that answers second - first is shown the same way.
function secondMinusFirst(d, first, second) {
  const x = num(d.difference), f = num(first), s = num(second);
  if (x === null) return { diff: null, lower: null, upper: null };
  const flipped = f !== null && s !== null && Math.abs(x - (f - s)) < Math.abs(x - (s - f));
  return flipped ? { diff: -x, lower: -num(d.ciUpper), upper: -num(d.ciLower) } : { diff: x, lower: num(d.ciLower), upper: num(d.ciUpper) };
}
function direction(c) {
  const words = Number(Math.abs(c.diff * 100).toFixed(2)) === 0 ? "did not change"
    : `${c.diff > 0 ? "rose" : "fell"} by ${Math.abs(c.diff * 100).toFixed(2)} points`;
  const unclear = c.lower !== null && c.lower <= 0 && c.upper >= 0;
  return words + (unclear && words !== "did not change" ? " (the interval includes 0: no clear change)" : "");
}
// The split time chosen, or the middle of the range (then shown in the input).
function splitTime(range) {
  const at = parseUtc($("diff-split").value);
  if (at !== null) return at;
  const middle = Math.floor((range.start + range.end) / 2 / HOUR) * HOUR;
  $("diff-split").value = new Date(middle * 1000).toISOString().slice(0, 16);
  saveView();
  return middle;
}

async function loadDifference() {
  if (isHeavyHitters()) return idle("diff", NOT_FOR_STRINGS);
  const gen = begin("diff");
  let d, at, range;
  try {
    range = timeRange();
    at = splitTime(range);
    if (at <= range.start || at >= range.end) throw new Error(`difference: the split time must fall inside the time range (${utc(range.start)} to ${utc(range.end)} UTC)`);
    d = await api("QueryService/GetDifference", {
      first: { metric: state.metric, startTimeSeconds: String(range.start), endTimeSeconds: String(at) },
      second: { metric: state.metric, startTimeSeconds: String(at), endTimeSeconds: String(range.end) },
      confidenceLevel: Number($("level").value) });
  } catch (e) {
    fail("diff", gen, e);
    return;
  }
  if (!current("diff", gen)) return;
  const level = levelText(d.confidenceLevel);
  const windows = `first window ${utc(range.start)} to ${utc(at)}, n ${count(d.first.n)}; second window ${utc(at)} to ${utc(range.end)} UTC, n ${count(d.second.n)}`;
  const result = $("diff-result");
  if (d.first.numeric && d.second.numeric) {
    showNumericDifference(d, windows, level);
    ready("diff", gen);
    return;
  }
  if (d.shares && d.shares.length) {
    result.textContent = `${windows}. Second minus first, in percentage points, with each category's ${level} Wald interval:`;
    const rows = d.shares.map((s, v) => {
      const f = d.first.shares[v].estimateUnbiased, sec = d.second.shares[v].estimateUnbiased;
      return { s, f, sec, c: secondMinusFirst(s, f, sec) };
    });
    fillTable("diff-shares", ["category", { name: "first window", cls: "num" }, { name: "second window", cls: "num" },
      { name: "second \u2212 first (points)", cls: "num" }, { name: "interval (points)", cls: "num" }, "change"],
    rows.map(({ s, f, sec, c }) => ({ data: { category: s.category },
      csv: [s.category, num(f), num(sec), c.diff, c.lower, c.upper],
      cells: [{ text: s.category }, { text: pct(f), cls: "num" }, { text: pct(sec), cls: "num" },
        { text: points(c.diff), cls: "num", data: { value: c.diff } },
        { text: `[${points(c.lower)}, ${points(c.upper)}]`, cls: "num", data: { lower: c.lower, upper: c.upper } },
        { text: direction(c) }] })));
    state.tables["diff-shares"].columns = ["category", "first_estimate", "second_estimate", "second_minus_first", "ci_lower", "ci_upper"];
    ready("diff", gen);
    return;
  }
  const c = secondMinusFirst(d, d.first.estimateUnbiased, d.second.estimateUnbiased);
  result.textContent = `${windows}. The estimate ${direction(c)}: ${pct(d.first.estimateUnbiased)} then ${pct(d.second.estimateUnbiased)}; ` +
    `second minus first ${points(c.diff)} percentage points, ${level} interval [${points(c.lower)}, ${points(c.upper)}] points.`;
  result.dataset.value = c.diff;
  result.dataset.lower = c.lower;
  result.dataset.upper = c.upper;
  ready("diff", gen);
}

// ---- Design privacy and planner.
function addFigure(list, name, text, title) {
  const dt = document.createElement("dt"); dt.textContent = name;
  const dd = document.createElement("dd"); dd.textContent = text;
  if (title) dd.title = title;
  list.append(dt, dd);
}

async function loadDesign() {
  const gen = begin("design");
  const prior = Number($("prior").value);
  const halfWidth = Number($("half-width").value);
  const m = metricInfo();
  const design = m ? { design: m.design.parameters } : { design: { twoCoin: {} } };
  const categorical = m && m.categories && m.categories.length > 0;
  const level = Number($("level").value);
  if (m && (m.range || designKey(m.design) === "heavyHitters")) {  // from the metric (docs/dashboard.md)
    if (m.range) showNumericDesign(m); else showHeavyHittersDesign(m);
    ready("design", gen);
    return;
  }
  try {
    // A categorical design is described through its metric (the metric fixes k).
    const d = await api("QueryService/DescribeDesign", categorical ? { metric: m.name, prior } : { ...design, prior });
    let p = null, planError = null;
    try {
      p = categorical
        ? await api("QueryService/PlanSurvey", { ...design, categories: m.categories, halfWidth, confidenceLevel: level, assumedPrevalence: -1 })
        : await api("QueryService/PlanSurvey", { ...design, halfWidth, confidenceLevel: level, assumedPrevalence: prior });
    } catch (e) {
      if (!categorical) throw e;
      planError = e;
    }
    if (!current("design", gen)) return;
    const list = $("design-figures"), plan = $("plan");
    const dd = d.design;
    if (categorical) {
      const c = dd.parameters.categorical || {};
      addFigure(list, "design", `categorical ${c.mechanism} v${dd.version}: k = ${dd.categories}` +
        `${num(dd.hashBuckets) ? ", g = " + dd.hashBuckets + " hash buckets" : ""} (p* = ${round(dd.a)}, q* = ${round(dd.b)})`, `p* = ${dd.a}, q* = ${dd.b}`);
      addFigure(list, "epsilon (nats)", round(dd.epsilon, 5), String(dd.epsilon));
      addFigure(list, "prior", pct(d.prior) + " for one category");
      addFigure(list, "posterior after a report supporting it", pct(d.posteriorGivenYes));
      addFigure(list, "posterior after a report not supporting it", pct(d.posteriorGivenNo));
      addFigure(list, "mutual information", `${round(d.mutualInformationBits)} bits of ${round(d.entropyBits)} (that category against the rest)`);
      if (p) {
        const lv = levelText(p.confidenceLevel);
        addFigure(plan, "reports needed, all shares together", `${p.reportsNeededSimultaneousWorstCase} for ±${pct(halfWidth)} on all ${m.categories.length} shares at ${lv} (${p.simultaneousMethod}, worst case)`);
        addFigure(plan, "reports needed, one share alone", `${p.reportsNeededWorstCase} for ±${pct(halfWidth)} at ${lv} (worst case)`);
      } else {
        addFigure(plan, "planner", "not available for this categorical design on this collector (" + planError.message + ")");
      }
    } else {
      const key = designKey(dd);
      addFigure(list, "design", `${DESIGN_NAMES[key] || humanize(key)}${dd.version ? " v" + dd.version : ""}: P(yes report | yes) = ${round(dd.a)}, P(yes report | no) = ${round(dd.b)}`,
        `${key}: a = ${dd.a}, b = ${dd.b}`);
      addFigure(list, "epsilon (nats)", dd.epsilonInfinite ? "infinite" : round(dd.epsilon, 5), String(dd.epsilon));
      addFigure(list, "prior", pct(d.prior));
      // A numeric design's figures are the whole report's (DescribeDesign, docs/privacy.md): the
      // posterior that the value is in a given bucket, at most and at least over the reports.
      const numericDesign = !!(dd.parameters && dd.parameters.numeric);
      addFigure(list, numericDesign ? "posterior that the value is in a bucket, after the whole report: at most"
        : "posterior after a \"yes\" report", pct(d.posteriorGivenYes));
      addFigure(list, numericDesign ? "the same, at least" : "posterior after a \"no\" report",
        pct(d.posteriorGivenNo));
      addFigure(list, "mutual information", `${round(d.mutualInformationBits)} bits of ${round(d.entropyBits)}`);
      addFigure(plan, "reports needed", `${p.reportsNeeded} at prevalence ${pct(prior)} for ±${pct(halfWidth)} at ${levelText(p.confidenceLevel)}`);
      addFigure(plan, "worst case", String(p.reportsNeededWorstCase));
      addFigure(plan, "variance vs a direct question", round(p.varianceInflation, 3) + "×", String(p.varianceInflation));
    }
    ready("design", gen);
  } catch (e) {
    fail("design", gen, e);
  }
}

// ---- Numeric metrics (issue 28): the mean and total (one_bit_mean), the histogram with each
// bucket's own and the simultaneous intervals, and the quantiles (d_bit_flip), in the metric's
// unit. Every figure keeps the API's raw value in data-value (data-lower, data-upper).
const NUMERIC_QUANTILES = [0.5, 0.9, 0.99];
// A value with 4 significant digits of the range's width, as the CLI prints it (38.32 years of
// a 72-year range, 33971 pesos of a 200000-peso range).
function valueText(v, e) {
  const x = num(v);
  if (x === null) return "—";
  const width = num(e.hi) - num(e.lo);
  const decimals = Math.min(6, Math.max(0, 4 - (width > 0 ? Math.ceil(Math.log10(width)) : 0)));
  const text = x.toFixed(decimals);
  return Number(text) === 0 ? (0).toFixed(decimals) : text;
}
const unitText = (e) => (e.unit ? " " + e.unit : "");
const unitHeader = (e) => (e && e.unit ? ` (${e.unit})` : "");
const valueInterval = (lo, hi, e) => `[${valueText(lo, e)}, ${valueText(hi, e)}]`;
function quantileName(level) { return num(level) === 0.5 ? "median" : `p${Number((num(level) * 100).toPrecision(6))}`; }
function bucketName(b, i, all, e) { return `[${valueText(b.lower, e)}, ${valueText(b.upper, e)}${i + 1 === all.length ? "]" : ")"}`; }
function isHistogram(p) { return !!(p.numeric && p.numeric.mechanism === "d_bit_flip"); }
// A numeric bucket or group without an estimate (too few reports).
function numericSuppressed(p) { return !p || p.suppressed === true || !p.numeric; }
function numericDesignText(m) {
  const n = (m.design.parameters && m.design.parameters.numeric) || {};
  const k = (n.bucketEdges || []).length - 1;
  const range = `[${m.range.lo}, ${m.range.hi}]${m.range.unit ? " " + m.range.unit : ""}`;
  return n.mechanism === "D_BIT_FLIP" ? `d_bit_flip, ${k} buckets of ${range}` : `one_bit_mean, ${range}`;
}
function clearNumeric() {
  $("numeric-figures").innerHTML = "";
  $("histogram-legend").textContent = "";
  destroyChart("histogram-chart");
  clearTable("histogram-table");
  clearTable("quantile-table");
}
function numericFigure(id, label, text, data, title) {
  const dt = document.createElement("dt"); dt.textContent = label;
  const dd = document.createElement("dd"); dd.id = id; dd.textContent = text;
  for (const [k, v] of Object.entries(data || {})) if (v !== null && v !== undefined) dd.dataset[k] = v;
  if (title) dd.title = title;
  $("numeric-figures").append(dt, dd);
}

function showNumeric(p) {
  const e = p.numeric, unit = unitText(e);
  numericFigure("n-range", "values", `in ${valueInterval(e.lo, e.hi, e)}${unit} (the SDK clips a value outside to the nearest end)`,
    { lower: num(e.lo), upper: num(e.hi) });
  const histogram = isHistogram(p);
  $("histogram").hidden = !histogram;
  if (histogram) { showHistogram(p); return; }
  numericFigure("n-mean", "mean", valueText(e.mean, e) + unit, { value: num(e.mean) }, String(e.mean));
  numericFigure("n-mean-interval", `${levelText(p.confidenceLevel)} interval of the mean`, valueInterval(e.meanCiLower, e.meanCiUpper, e) + unit,
    { lower: num(e.meanCiLower), upper: num(e.meanCiUpper) });
  numericFigure("n-mean-se", "standard error of the mean", valueText(e.meanStandardError, e) + unit, { value: num(e.meanStandardError) });
  numericFigure("n-total", `total over ${count(e.devices)} reporting devices`, valueText(e.total, e) + unit,
    { value: num(e.total), devices: num(e.devices) }, "the mean times the devices that reported: a total over the reporting devices, not over every device");
  numericFigure("n-total-interval", `${levelText(p.confidenceLevel)} interval of the total`, valueInterval(e.totalCiLower, e.totalCiUpper, e) + unit,
    { lower: num(e.totalCiLower), upper: num(e.totalCiUpper) });
  numericFigure("n-total-se", "standard error of the total", valueText(e.totalStandardError, e) + unit, { value: num(e.totalStandardError) });
}

// The histogram: bars of the unbiased and consistent shares with each bucket's interval (thick
// whisker) and the simultaneous one (thin), the buckets' table and the quantiles' table.
function showHistogram(p) {
  const e = p.numeric, buckets = e.buckets || [], level = levelText(p.confidenceLevel);
  const method = e.simultaneousMethod === "bonferroni" ? "Bonferroni" : "Sidak";
  $("histogram-legend").textContent = `Bars: each bucket's unbiased share and its consistent share (norm_sub: never below 0, ` +
    `summing to 100 %). Thick whisker: ${level} interval of each bucket alone; thin whisker: simultaneous ${level} intervals ` +
    `(${method}, each at ${levelText(e.perBucketLevel)}: all ${buckets.length} cover together).`;
  $("histogram-legend").dataset.method = e.simultaneousMethod;
  $("histogram-legend").dataset.perBucketLevel = e.perBucketLevel;
  const names = buckets.map((b, i) => bucketName(b, i, buckets, e));
  const bounds = axisBounds(buckets.flatMap((b) => [b.simultaneousLower, b.simultaneousUpper, b.ciLower, b.ciUpper, b.estimateUnbiased, b.estimateConsistent]));
  destroyChart("histogram-chart");
  new Chart($("histogram-chart"), {
    type: "bar",
    data: { labels: names, datasets: [
      { label: "unbiased share (%)", data: buckets.map((b) => num(b.estimateUnbiased) * 100), backgroundColor: "rgba(54,112,196,0.6)" },
      { label: "consistent share, norm_sub (%)", data: buckets.map((b) => num(b.estimateConsistent) * 100), backgroundColor: "rgba(230,145,56,0.6)" }] },
    options: { animation: false, maintainAspectRatio: false,
      scales: { x: { title: { display: true, text: `bucket${unitHeader(e)}` } }, y: { title: { display: true, text: "share (%)" }, min: bounds.min, max: bounds.max } },
      plugins: { shareWhiskers: { shares: buckets } } },
    plugins: [shareWhiskers],
  });
  fillTable("histogram-table", [`bucket${unitHeader(e)}`, { name: "reports sampling it", cls: "num" }, { name: "bits 1", cls: "num" },
    { name: "unbiased share", cls: "num" }, { name: "consistent share", cls: "num", title: "norm_sub" }, { name: "standard error", cls: "num" },
    { name: "interval (this bucket)", cls: "num" }, { name: "simultaneous interval (all buckets)", cls: "num" }],
  buckets.map((b, i) => ({ data: { lower: num(b.lower), upper: num(b.upper) },
    csv: [num(b.lower), num(b.upper), num(b.sampled), num(b.ones), num(b.estimateUnbiased), num(b.estimateConsistent), num(b.standardError),
      num(b.ciLower), num(b.ciUpper), num(b.simultaneousLower), num(b.simultaneousUpper)],
    cells: [{ text: names[i], cls: "num" }, { text: count(b.sampled), cls: "num count", data: { value: num(b.sampled) } },
      { text: count(b.ones), cls: "num count", data: { value: num(b.ones) } },
      { text: pct(b.estimateUnbiased), cls: "num", data: { value: num(b.estimateUnbiased) } },
      { text: pct(b.estimateConsistent), cls: "num", data: { value: num(b.estimateConsistent) } },
      { text: pct(b.standardError), cls: "num", data: { value: num(b.standardError) } },
      { text: interval(b.ciLower, b.ciUpper), cls: "num", data: { lower: num(b.ciLower), upper: num(b.ciUpper) } },
      { text: interval(b.simultaneousLower, b.simultaneousUpper), cls: "num", data: { lower: num(b.simultaneousLower), upper: num(b.simultaneousUpper) } }] })));
  state.tables["histogram-table"].columns = ["lower", "upper", "sampled", "ones", "estimate_unbiased", "estimate_consistent", "standard_error",
    "ci_lower", "ci_upper", "simultaneous_lower", "simultaneous_upper"];
  const quantiles = e.quantiles || [];
  fillTable("quantile-table", ["quantile", { name: `value${unitHeader(e)}`, cls: "num" }, { name: `${level} interval`, cls: "num" }],
    quantiles.map((q) => ({ data: { level: num(q.level) },
      csv: [num(q.level), num(q.value), num(q.ciLower), num(q.ciUpper)],
      cells: [{ text: `${quantileName(q.level)} (${num(q.level)})` }, { text: valueText(q.value, e), cls: "num", data: { value: num(q.value) } },
        { text: valueInterval(q.ciLower, q.ciUpper, e), cls: "num", data: { lower: num(q.ciLower), upper: num(q.ciUpper) } }] })));
  state.tables["quantile-table"].columns = ["level", "value", "ci_lower", "ci_upper"];
}

// The series of a numeric metric: the mean (one_bit_mean) or the median (d_bit_flip) over time,
// with its interval as a band, in the metric's unit.
function seriesFigure(b) {
  if (numericSuppressed(b)) return null;
  const e = b.numeric;
  if (!isHistogram(b)) return { value: num(e.mean), lower: num(e.meanCiLower), upper: num(e.meanCiUpper), e };
  const q = (e.quantiles || []).find((x) => num(x.level) === 0.5);
  return q ? { value: num(q.value), lower: num(q.ciLower), upper: num(q.ciUpper), e } : null;
}
function drawNumericSeries(buckets) {
  const first = buckets.find((b) => !numericSuppressed(b));
  const histogram = first ? isHistogram(first) : false;
  const what = histogram ? "median" : "mean";
  const unit = first ? unitHeader(first.numeric) : "";
  $("series-legend").textContent = `Line: the ${what}${unit}; shaded band: its ${levelText($("level").value)} interval; ` +
    "\u25B2 suppressed bucket (too few reports); dashed line: new design version.";
  $("series-legend").dataset.figure = what;
  const figures = buckets.map(seriesFigure);
  const data = { labels: buckets.map((b) => bucketLabel(b.startTimeSeconds)), datasets: [
    { label: "interval upper", data: figures.map((f) => (f ? f.upper : null)), borderWidth: 0, pointRadius: 0, fill: "+1", backgroundColor: "rgba(54,112,196,0.2)" },
    { label: "interval lower", data: figures.map((f) => (f ? f.lower : null)), borderWidth: 0, pointRadius: 0, fill: false },
    { label: what, data: figures.map((f) => (f ? f.value : null)), borderColor: "#1f4e96", backgroundColor: "#1f4e96", fill: false, spanGaps: false },
    { ...SUPPRESSED_MARK, data: buckets.map((b, i) => (numericSuppressed(b) ? (figures.find(Boolean) || { lower: 0 }).lower : null)) }] };
  destroyChart("series-chart");
  new Chart($("series-chart"), { type: "line", data,
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: what + unit } } },
      plugins: { legend: { labels: { filter: (item) => !item.text.startsWith("interval") } }, versionMarks: { indexes: designMarks(buckets) } } },
    plugins: [versionMarks] });
  fillTable("series-table", ["bucket start (UTC)", { name: "n", cls: "num" }, { name: what + unit, cls: "num" }, { name: "interval", cls: "num" }, "design"],
    buckets.map((b, i) => {
      const f = figures[i];
      return { data: { start: num(b.startTimeSeconds) },
        csv: [num(b.startTimeSeconds), num(b.n), f ? f.value : null, f ? f.lower : null, f ? f.upper : null, b.design ? b.design.version : null],
        cells: [{ text: utc(b.startTimeSeconds) }, { text: count(b.n), cls: "num count" },
          { text: f ? valueText(f.value, f.e) : "suppressed", cls: "num", data: { value: f ? f.value : "" } },
          { text: f ? valueInterval(f.lower, f.upper, f.e) : "", cls: "num", data: f ? { lower: f.lower, upper: f.upper } : {} },
          { text: b.design ? "v" + b.design.version : "" }] };
    }));
  state.tables["series-table"].columns = ["start_time_seconds", "n", what, "ci_lower", "ci_upper", "design_version"];
}

// A numeric metric by label: the mean (or median) of each group with its interval as a whisker.
function drawNumericGroups(key, groups) {
  const figures = groups.map(seriesFigure);
  const first = figures.find(Boolean);
  const what = groups.some((g) => isHistogram(g)) ? "median" : "mean";
  const unit = first ? unitHeader(first.e) : "";
  $("groups-legend").textContent = `Bars: the ${what} by ${key}; whiskers: its ${levelText($("level").value)} interval; suppressed groups have too few reports.`;
  destroyChart("groups-chart");
  new Chart($("groups-chart"), { type: "bar",
    data: { labels: groups.map((g) => (g.groupValue || "(no value)") + (numericSuppressed(g) ? " (suppressed)" : "")),
      datasets: [{ label: `${what}${unit} by ${key}`, data: figures.map((f) => (f ? f.value : null)), backgroundColor: "rgba(54,112,196,0.6)" }] },
    options: { animation: false, maintainAspectRatio: false,
      // The whiskers are no dataset: the axis is told their ends, so none is cut (ticks stay nice).
      scales: { y: { title: { display: true, text: what + unit }, ...suggestedBounds(figures.flatMap((f) => (f ? [f.lower, f.upper] : []))) } },
      plugins: { whiskers: { scale: 1, intervals: figures.map((f) => (f ? [f.lower, f.upper] : null)) } } },
    plugins: [whiskers] });
  fillTable("groups-table", [key, { name: "n", cls: "num" }, { name: what + unit, cls: "num" }, { name: "interval", cls: "num" }],
    groups.map((g, i) => {
      const f = figures[i];
      return { data: { group: g.groupValue },
        csv: [g.groupValue, num(g.n), f ? f.value : null, f ? f.lower : null, f ? f.upper : null],
        cells: [{ text: g.groupValue || "(no value)" }, { text: count(g.n), cls: "num count", data: { value: num(g.n) } },
          { text: f ? valueText(f.value, f.e) : "suppressed", cls: "num", data: { value: f ? f.value : "" } },
          { text: f ? valueInterval(f.lower, f.upper, f.e) : "", cls: "num", data: f ? { lower: f.lower, upper: f.upper } : {} }] };
    }));
  state.tables["groups-table"].columns = [key, "n", what, "ci_lower", "ci_upper"];
}

// The difference of a numeric metric as the API computes it (GetDifference: the means in the
// metric's unit, or each bucket's share), stated as second minus first like the other kinds.
function showNumericDifference(d, windows, level) {
  const a = d.first.numeric, b = d.second.numeric, result = $("diff-result");
  if (!isHistogram(d.first)) {
    const c = secondMinusFirst(d, a.mean, b.mean), change = c.diff;
    const same = Number(valueText(Math.abs(change), a)) === 0;
    result.textContent = `${windows}. The mean ${same ? "did not change" : (change > 0 ? "rose" : "fell") + " by " + valueText(Math.abs(change), a) + unitText(a)}: ` +
      `${valueText(a.mean, a)} then ${valueText(b.mean, a)}${unitText(a)}; second minus first ${change > 0 && !same ? "+" : ""}${valueText(change, a)}${unitText(a)}, ` +
      `${level} interval ${valueInterval(c.lower, c.upper, a)}${unitText(a)}` +
      (c.lower <= 0 && c.upper >= 0 && !same ? " (the interval includes 0: no clear change)." : ".");
    result.dataset.value = c.diff;
    result.dataset.lower = c.lower;
    result.dataset.upper = c.upper;
    return;
  }
  result.textContent = `${windows}. Each bucket's share, second minus first, in percentage points, with its own ${level} Wald interval:`;
  const buckets = a.buckets || [];
  const rows = (d.shares || []).map((s, i) => {
    const x = buckets[i] || {}, y = (b.buckets || [])[i] || {};
    return { name: bucketName(x, i, buckets, a), f: x.estimateUnbiased, sec: y.estimateUnbiased,
      c: secondMinusFirst(s, x.estimateUnbiased, y.estimateUnbiased) };
  });
  fillTable("diff-shares", ["bucket", { name: "first window", cls: "num" }, { name: "second window", cls: "num" },
    { name: "second \u2212 first (points)", cls: "num" }, { name: "interval (points)", cls: "num" }, "change"],
  rows.map(({ name, f, sec, c }) => ({ data: { bucket: name },
    csv: [name, num(f), num(sec), c.diff, c.lower, c.upper],
    cells: [{ text: name }, { text: pct(f), cls: "num" }, { text: pct(sec), cls: "num" },
      { text: points(c.diff), cls: "num", data: { value: c.diff } },
      { text: `[${points(c.lower)}, ${points(c.upper)}]`, cls: "num", data: { lower: c.lower, upper: c.upper } },
      { text: direction(c) }] })));
  state.tables["diff-shares"].columns = ["bucket", "first_estimate", "second_estimate", "second_minus_first", "ci_lower", "ci_upper"];
}

// A numeric design's figures, from the metric (mechanism, epsilon, range, buckets); the planner
// for numbers is `deniable plan --range` (docs/cli.md).
function showNumericDesign(m) {
  const list = $("design-figures"), n = m.design.parameters.numeric || {};
  const edges = n.bucketEdges || [];
  addFigure(list, "design", `${n.mechanism === "D_BIT_FLIP" ? "dBitFlip" : "1BitMean"} v${m.design.version}` +
    (n.mechanism === "D_BIT_FLIP" ? `: ${edges.length - 1} buckets, each report samples ${n.sampledBuckets || edges.length - 1} and sends one randomized bit for each`
      : ": one randomized bit per report, 1 more often the higher the value"), n.mechanism);
  addFigure(list, "epsilon (nats)", round(m.design.epsilon || n.epsilon, 5), String(m.design.epsilon || n.epsilon));
  addFigure(list, "values", `[${m.range.lo}, ${m.range.hi}]${m.range.unit ? " " + m.range.unit : ""}, clipped to the range on the device`);
  if (edges.length > 2) addFigure(list, n.mechanism === "D_BIT_FLIP" ? "bucket edges" : "rounding grid", edges.join(", "));
  addFigure($("plan"), "planner", "for numeric metrics: deniable plan --range (docs/cli.md)");
}

// ---- Wiring.
function onViewChange(load) {
  return () => {
    saveView();
    showRange();
    if (state.metric) load();
  };
}

function init() {
  $("token").value = token();
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem("deniable.token", $("token").value.trim());
    loadMetrics();
  });
  $("token-forget").addEventListener("click", () => { sessionStorage.removeItem("deniable.token"); $("token").value = ""; loadMetrics(); });
  $("range").addEventListener("change", () => {
    $("custom-range").hidden = $("range").value !== "custom";
    if ($("range").value === "custom" && !$("range-from").value) {
      const r = { end: (Math.floor(Date.now() / 1000 / HOUR) + 1) * HOUR };
      $("range-from").value = new Date((r.end - 30 * DAY) * 1000).toISOString().slice(0, 16);
      $("range-to").value = new Date(r.end * 1000).toISOString().slice(0, 16);
    }
    $("diff-split").value = "";
    saveView();
    showRange();
    drawMetrics();
    if (state.metric) loadAll();
  });
  $("range-go").addEventListener("click", () => { $("diff-split").value = ""; saveView(); showRange(); drawMetrics(); if (state.metric) loadAll(); });
  for (const id of ["method", "level"]) $(id).addEventListener("change", onViewChange(loadAll));
  $("simultaneous").addEventListener("change", onViewChange(() => Promise.all([loadPrevalence(), loadGroups()])));
  $("bucket").addEventListener("change", onViewChange(loadSeries));
  $("group-go").addEventListener("click", onViewChange(loadGroups));
  $("group-by").addEventListener("keydown", (ev) => { if (ev.key === "Enter") onViewChange(loadGroups)(); });
  $("diff-go").addEventListener("click", onViewChange(loadDifference));
  $("design-go").addEventListener("click", loadDesign);
  $("live-docs").href = LIVE_DOCS;
  $("live").addEventListener("change", () => { saveView(); syncLive(); });
  $("live-every").addEventListener("change", () => { saveView(); if ($("live").checked) syncLive(); });
  for (const button of document.querySelectorAll("button.csv")) {
    button.disabled = true;
    button.addEventListener("click", () => downloadCsv(button.dataset.table));
  }
  // A link pasted into this tab (or edited by hand) reopens its view.
  window.addEventListener("hashchange", () => {
    const metric = restoreView();
    showRange();
    drawMetrics();
    if (metric && state.metrics.some((m) => m.name === metric)) selectMetric(metric);
  });
  if (typeof Chart === "undefined") setError("chart", "Chart.js did not load; charts are unavailable.");
  const metric = restoreView();
  showRange();
  loadMetrics(metric);
}

init();
