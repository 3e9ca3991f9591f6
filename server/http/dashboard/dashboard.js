// The Deniable dashboard: plain JavaScript over the collector's JSON API (docs/http.md).
// Every number shown comes from an API answer; each displayed figure keeps the raw value in
// its data-value attribute. The token is kept in sessionStorage (gone when the tab closes).
"use strict";

const $ = (id) => document.getElementById(id);
const HOUR = 3600;
const state = { metric: null, metrics: [], seriesChart: null, groupsChart: null, sharesChart: null };

function token() { return sessionStorage.getItem("deniable.token") || ""; }

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
}
function clearError() { $("error").hidden = true; $("error").textContent = ""; }

// POST /v1/<method> with the JSON request; resolves with the answer or rejects with an Error
// whose message is the API's error message (it names the field).
async function api(method, request) {
  const headers = { "Content-Type": "application/json" };
  if (token()) headers["Authorization"] = "Bearer " + token();
  let response;
  try {
    response = await fetch("/v1/" + method, { method: "POST", headers, body: JSON.stringify(request || {}) });
  } catch (e) {
    throw new Error("cannot reach the collector: " + e.message);
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const err = body.error || {};
    throw new Error(`${method}: ${response.status} ${err.status || ""}: ${err.message || response.statusText}`);
  }
  return body;
}

const pct = (x) => (x * 100).toFixed(2) + " %";
function setFigure(id, text, value) {
  const el = $(id);
  el.textContent = text;
  el.dataset.value = value === undefined ? "" : String(value);
}
function designName(design) {
  const p = (design && design.parameters) || {};
  return Object.keys(p)[0] || "?";
}
function cell(row, text, cls) {
  const td = row.insertCell();
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}
function interval(p) { return `[${pct(p.ciLower)}, ${pct(p.ciUpper)}]`; }
function simultaneous(s) { return `[${pct(s.simultaneousLower)}, ${pct(s.simultaneousUpper)}]`; }
function selected(id) { return $(id).value; }
function queryOptions() {
  const options = { method: selected("method"), confidenceLevel: Number(selected("level")) };
  if (isCategorical()) options.simultaneous = selected("simultaneous");
  return options;
}
// The selected metric's category names; empty for a yes/no metric.
function categories() {
  const m = state.metrics.find((x) => x.name === state.metric);
  return (m && m.categories) || [];
}
function isCategorical() { return categories().length > 0; }
// A distinct colour per category (k up to 256): hues spread by the golden angle.
function categoryColor(i, alpha) { return `hsla(${Math.round((i * 137.508) % 360)}, 65%, 42%, ${alpha === undefined ? 1 : alpha})`; }
// Replaces a table's header with one row of `names`.
function setHeader(table, names) {
  const head = $(table).tHead;
  head.innerHTML = "";
  const row = head.insertRow();
  for (const name of names) {
    const th = document.createElement("th");
    th.textContent = name;
    row.appendChild(th);
  }
}

async function loadMetrics() {
  clearError();
  let answer;
  try {
    answer = await api("QueryService/ListMetrics", {});
  } catch (e) {
    showError(e.message);
    $("metrics").tBodies[0].innerHTML = "";
    $("detail").hidden = true;
    return;
  }
  state.metrics = answer.metrics || [];
  const body = $("metrics").tBodies[0];
  body.innerHTML = "";
  for (const m of state.metrics) {
    const row = body.insertRow();
    row.dataset.metric = m.name;
    cell(row, m.name);
    cell(row, m.description);
    cell(row, designName(m.design) + (m.categories && m.categories.length ? ` (${m.categories.length} categories)` : ""));
    cell(row, String(m.design.version), "num");
    cell(row, m.design.epsilonInfinite ? "infinite" : Number(m.design.epsilon).toFixed(4), "num");
    const n = cell(row, "…", "num");
    n.className = "num reports";
    row.addEventListener("click", () => selectMetric(m.name));
    api("QueryService/GetPrevalence", { metric: m.name })
      .then((p) => { n.textContent = p.n; n.dataset.value = p.n; })
      .catch((e) => { n.textContent = "below minimum"; n.title = e.message; });
  }
  if (state.metrics.length === 0) showError("No metrics yet: create one with deniable create-metric.");
  if (state.metric) selectMetric(state.metric);
}

async function selectMetric(name) {
  state.metric = name;
  for (const row of $("metrics").tBodies[0].rows) row.classList.toggle("selected", row.dataset.metric === name);
  const m = state.metrics.find((x) => x.name === name) || {};
  $("metric-name").textContent = name;
  $("metric-question").textContent = m.description || "";
  $("detail").hidden = false;
  const categorical = isCategorical();
  for (const el of document.querySelectorAll("#prevalence .yes-no")) el.hidden = categorical;
  $("shares").hidden = !categorical;
  $("diff-shares").hidden = true;
  $("diff-result").textContent = "";
  await Promise.all([loadPrevalence(), loadSeries(), loadGroups(), loadDesign()]);
}

// Fields some collectors add to Prevalence (estimand, combination, method_reason, the window and
// the explanation sentence of docs/statistics.md section 4.4, ...): shown as
// they come when present.
const EXTRA_FIELDS = ["estimand", "combination", "methodReason", "varianceBound", "window", "explanation"];

async function loadPrevalence() {
  try {
    clearError();
    const p = await api("QueryService/GetPrevalence", { metric: state.metric, ...queryOptions() });
    setFigure("p-n", p.n, p.n);
    setFigure("p-method", `${p.method} at ${(p.confidenceLevel * 100).toFixed(1)} %`, p.method);
    setFigure("p-epsilon", Number(p.epsilon).toFixed(4), p.epsilon);
    setFigure("p-central", p.centralMethod === "shuffle_numerical"
      ? `${Number(p.centralEpsilon).toFixed(4)} at delta = ${p.centralDelta} over ${p.centralN} reports, against an analyst who sees only counts`
      : `not amplified (local epsilon only)${p.centralNote ? ": " + p.centralNote : ""}`, p.centralEpsilon);
    if (p.shares && p.shares.length) {
      showShares(p);
    } else {
      showYesNo(p);
    }
    showExtra(p);
  } catch (e) {
    showError(e.message);
  }
}

function showYesNo(p) {
  setFigure("p-estimate", pct(p.estimateUnbiased) + (p.estimateClipped !== p.estimateUnbiased ? ` (clipped ${pct(p.estimateClipped)})` : ""), p.estimateUnbiased);
  setFigure("p-lower", pct(p.ciLower), p.ciLower);
  setFigure("p-upper", pct(p.ciUpper), p.ciUpper);
  setFigure("p-se", pct(p.standardError), p.standardError);
}

function showExtra(p) {
  const extra = $("p-extra");
  extra.innerHTML = "";
  for (const key of Object.keys(p)) {
    if (!EXTRA_FIELDS.includes(key) && !(key.startsWith("estimand") || key.startsWith("methodReason"))) continue;
    if (p[key] === "" || p[key] === undefined) continue;
    const dt = document.createElement("dt"); dt.textContent = key;
    const dd = document.createElement("dd"); dd.textContent = typeof p[key] === "object" ? JSON.stringify(p[key]) : p[key];
    dd.dataset.field = key;
    extra.append(dt, dd);
  }
}

// A categorical metric's shares (Prevalence.shares): bars of the unbiased estimate and of the
// consistent (norm-sub) share, whiskers for the per-category and the simultaneous interval, and
// a table with every figure (raw values in data-* attributes).
function showShares(p) {
  const shares = p.shares;
  const level = (p.confidenceLevel * 100).toFixed(1);
  const method = p.simultaneousMethod === "bonferroni" ? "Bonferroni" : "Sidak";
  $("shares-legend").textContent = `bars: unbiased estimate and consistent share (${p.consistentMethod}: ` +
    `projected onto the simplex, non-negative, summing to 100 %); thick whisker: ${level} % interval of ` +
    `each category alone; thin whisker: simultaneous ${level} % intervals (${method}, each at ` +
    `${(p.perCategoryLevel * 100).toFixed(2)} %: all ${shares.length} cover together)`;
  $("shares-legend").dataset.method = p.simultaneousMethod;
  $("shares-legend").dataset.perCategoryLevel = p.perCategoryLevel;
  if (state.sharesChart) state.sharesChart.destroy();
  state.sharesChart = new Chart($("shares-chart"), {
    type: "bar",
    data: { labels: shares.map((s) => s.category),
      datasets: [
        { label: "unbiased estimate (%)", data: shares.map((s) => s.estimateUnbiased * 100), backgroundColor: "rgba(54,112,196,0.6)" },
        { label: `consistent share, ${p.consistentMethod} (%)`, data: shares.map((s) => s.estimateConsistent * 100), backgroundColor: "rgba(230,145,56,0.6)" },
      ] },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: "share (%)" }, min: Math.min(0, ...shares.map((s) => s.simultaneousLower * 100)),
        suggestedMax: Math.max(...shares.map((s) => s.simultaneousUpper * 100)) } },
      plugins: { shareWhiskers: { shares } } },
    plugins: [shareWhiskers],
  });
  const body = $("shares-table").tBodies[0];
  body.innerHTML = "";
  for (const s of shares) {
    const row = body.insertRow();
    row.dataset.category = s.category;
    cell(row, s.category);
    cell(row, s.supportCount, "num").dataset.value = s.supportCount;
    cell(row, pct(s.estimateUnbiased), "num").dataset.value = s.estimateUnbiased;
    cell(row, pct(s.estimateConsistent), "num").dataset.value = s.estimateConsistent;
    cell(row, pct(s.standardError), "num").dataset.value = s.standardError;
    const iv = cell(row, interval(s), "num");
    iv.dataset.lower = s.ciLower; iv.dataset.upper = s.ciUpper;
    const sim = cell(row, simultaneous(s), "num");
    sim.dataset.lower = s.simultaneousLower; sim.dataset.upper = s.simultaneousUpper;
  }
}

// Draws, over the first dataset's bars, the per-category interval (thick) and the simultaneous
// interval (thin, wider caps) of chart.options.plugins.shareWhiskers.shares.
const shareWhiskers = {
  id: "shareWhiskers",
  afterDatasetsDraw(chart, args, options) {
    const shares = (options && options.shares) || [];
    const bars = chart.getDatasetMeta(0).data;
    const { ctx, scales } = chart;
    ctx.save();
    shares.forEach((s, i) => {
      if (!bars[i]) return;
      const x = bars[i].x;
      const draw = (lo, hi, cap, width, color) => {
        const y0 = scales.y.getPixelForValue(lo * 100), y1 = scales.y.getPixelForValue(hi * 100);
        ctx.strokeStyle = color; ctx.lineWidth = width;
        ctx.beginPath();
        ctx.moveTo(x, y0); ctx.lineTo(x, y1);
        ctx.moveTo(x - cap, y0); ctx.lineTo(x + cap, y0);
        ctx.moveTo(x - cap, y1); ctx.lineTo(x + cap, y1);
        ctx.stroke();
      };
      draw(s.simultaneousLower, s.simultaneousUpper, 10, 1, "#555");
      draw(s.ciLower, s.ciUpper, 5, 3, "#111");
    });
    ctx.restore();
  },
};

// Draws dashed vertical lines at the indexes in chart.options.plugins.versionMarks.
const versionMarks = {
  id: "versionMarks",
  afterDatasetsDraw(chart, args, options) {
    const marks = (options && options.indexes) || [];
    const { ctx, chartArea, scales } = chart;
    ctx.save();
    ctx.setLineDash([5, 4]);
    ctx.strokeStyle = "#b35900";
    for (const m of marks) {
      const x = scales.x.getPixelForValue(m.index) - (m.index > 0 ? (scales.x.getPixelForValue(m.index) - scales.x.getPixelForValue(m.index - 1)) / 2 : 0);
      ctx.beginPath(); ctx.moveTo(x, chartArea.top); ctx.lineTo(x, chartArea.bottom); ctx.stroke();
      ctx.fillStyle = "#b35900"; ctx.fillText("design v" + m.version, x + 3, chartArea.top + 10);
    }
    ctx.restore();
  },
};

// Draws an interval whisker over each bar (chart.options.plugins.whiskers.intervals).
const whiskers = {
  id: "whiskers",
  afterDatasetsDraw(chart, args, options) {
    const intervals = (options && options.intervals) || [];
    const { ctx, scales } = chart;
    ctx.save();
    ctx.strokeStyle = "#222";
    intervals.forEach((iv, i) => {
      if (!iv) return;
      const x = scales.x.getPixelForValue(i), lo = scales.y.getPixelForValue(iv[0] * 100), hi = scales.y.getPixelForValue(iv[1] * 100);
      ctx.beginPath();
      ctx.moveTo(x, lo); ctx.lineTo(x, hi);
      ctx.moveTo(x - 6, lo); ctx.lineTo(x + 6, lo);
      ctx.moveTo(x - 6, hi); ctx.lineTo(x + 6, hi);
      ctx.stroke();
    });
    ctx.restore();
  },
};

function utc(seconds) { return new Date(Number(seconds) * 1000).toISOString().slice(0, 16).replace("T", " "); }

async function loadSeries() {
  const bucket = selected("bucket");
  const now = Math.floor(Date.now() / 1000);
  const span = bucket === "HOUR" ? 7 * 24 * HOUR : 53 * 7 * 24 * HOUR;
  let series;
  try {
    series = await api("QueryService/GetSeries", {
      metric: state.metric, startTimeSeconds: String(Math.floor((now - span) / HOUR) * HOUR),
      endTimeSeconds: String((Math.floor(now / HOUR) + 2) * HOUR), bucket, ...queryOptions() });
  } catch (e) {
    showError(e.message);
    return;
  }
  const buckets = series.buckets || [];
  $("series-band-label").hidden = !isCategorical();
  if (isCategorical()) {
    drawShareSeries(buckets);
    return;
  }
  $("series-legend").textContent = "line: estimate; band: interval; \u25B2 suppressed bucket (too few reports); dashed line: new design version";
  setHeader("series-table", ["bucket start (UTC)", "n", "estimate", "interval", "design"]);
  const labels = buckets.map((b) => utc(b.startTimeSeconds));
  const value = (b, f) => (b.suppressed ? null : b[f] * 100);
  const marks = [];
  buckets.forEach((b, i) => {
    const v = b.design && b.design.version;
    if (i > 0 && v && buckets[i - 1].design && buckets[i - 1].design.version !== v) marks.push({ index: i, version: v });
  });
  const data = {
    labels,
    datasets: [
      { label: "interval upper", data: buckets.map((b) => value(b, "ciUpper")), borderWidth: 0, pointRadius: 0, fill: "+1", backgroundColor: "rgba(54,112,196,0.2)" },
      { label: "interval lower", data: buckets.map((b) => value(b, "ciLower")), borderWidth: 0, pointRadius: 0, fill: false },
      { label: "estimate", data: buckets.map((b) => value(b, "estimateUnbiased")), borderColor: "#1f4e96", backgroundColor: "#1f4e96", fill: false, spanGaps: false },
      { label: "suppressed", type: "scatter", data: buckets.map((b) => (b.suppressed ? 0 : null)), pointStyle: "triangle", pointRadius: 7, backgroundColor: "#c0392b", borderColor: "#c0392b" },
    ],
  };
  if (state.seriesChart) state.seriesChart.destroy();
  state.seriesChart = new Chart($("series-chart"), {
    type: "line", data,
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: "prevalence (%)" } } },
      plugins: { legend: { labels: { filter: (item) => !item.text.startsWith("interval") } }, versionMarks: { indexes: marks } } },
    plugins: [versionMarks],
  });
  const body = $("series-table").tBodies[0];
  body.innerHTML = "";
  for (const b of buckets) {
    const row = body.insertRow();
    cell(row, utc(b.startTimeSeconds));
    cell(row, b.n, "num");
    cell(row, b.suppressed ? "suppressed" : pct(b.estimateUnbiased), "num");
    cell(row, b.suppressed ? "" : interval(b), "num");
    cell(row, b.design ? "v" + b.design.version : "");
  }
  $("series-chart").dataset.buckets = String(buckets.length);
}

function designMarks(buckets) {
  const marks = [];
  buckets.forEach((b, i) => {
    const v = b.design && b.design.version;
    if (i > 0 && v && buckets[i - 1].design && buckets[i - 1].design.version !== v) marks.push({ index: i, version: v });
  });
  return marks;
}

// A categorical metric's series: one line per category (unbiased estimate), the interval band of
// the category chosen in "Band for", and a table with every category's estimate per bucket.
function drawShareSeries(buckets) {
  const names = categories();
  const band = $("series-band");
  if (band.options.length !== names.length || [...band.options].some((o, i) => o.value !== String(i))) {
    band.innerHTML = "";
    names.forEach((name, i) => band.add(new Option(name, String(i))));
  }
  const chosen = Number(band.value || 0);
  $("series-legend").textContent = `one line per category: unbiased estimate; band: ${names[chosen]}'s interval; ` +
    "\u25B2 suppressed bucket (too few reports); dashed line: new design version";
  const labels = buckets.map((b) => utc(b.startTimeSeconds));
  const share = (b, v, f) => (b.suppressed || !b.shares || !b.shares[v] ? null : b.shares[v][f] * 100);
  const datasets = [
    { label: "interval upper", data: buckets.map((b) => share(b, chosen, "ciUpper")), borderWidth: 0, pointRadius: 0, fill: "+1", backgroundColor: categoryColor(chosen, 0.18) },
    { label: "interval lower", data: buckets.map((b) => share(b, chosen, "ciLower")), borderWidth: 0, pointRadius: 0, fill: false },
  ];
  names.forEach((name, v) => datasets.push({ label: name, data: buckets.map((b) => share(b, v, "estimateUnbiased")),
    borderColor: categoryColor(v), backgroundColor: categoryColor(v), fill: false, spanGaps: false }));
  datasets.push({ label: "suppressed", type: "scatter", data: buckets.map((b) => (b.suppressed ? 0 : null)), pointStyle: "triangle", pointRadius: 7, backgroundColor: "#c0392b", borderColor: "#c0392b" });
  if (state.seriesChart) state.seriesChart.destroy();
  state.seriesChart = new Chart($("series-chart"), {
    type: "line", data: { labels, datasets },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: "share (%)" } } },
      plugins: { legend: { labels: { filter: (item) => !item.text.startsWith("interval") } }, versionMarks: { indexes: designMarks(buckets) } } },
    plugins: [versionMarks],
  });
  setHeader("series-table", ["bucket start (UTC)", "n", ...names.map((n) => `${n}: estimate [interval]`), "design"]);
  const body = $("series-table").tBodies[0];
  body.innerHTML = "";
  for (const b of buckets) {
    const row = body.insertRow();
    row.dataset.start = b.startTimeSeconds;
    cell(row, utc(b.startTimeSeconds));
    cell(row, b.n, "num");
    names.forEach((name, v) => {
      const s = b.shares && b.shares[v];
      const td = cell(row, b.suppressed || !s ? (b.suppressed ? "suppressed" : "") : `${pct(s.estimateUnbiased)} ${interval(s)}`, "num");
      td.dataset.category = name;
      if (s && !b.suppressed) { td.dataset.value = s.estimateUnbiased; td.dataset.lower = s.ciLower; td.dataset.upper = s.ciUpper; }
    });
    cell(row, b.design ? "v" + b.design.version : "");
  }
  $("series-chart").dataset.buckets = String(buckets.length);
}

// Each loadGroups call gets a number; only the newest draws, and the table is emptied at once, so
// a slow earlier answer never overwrites a newer one nor leaves rows that are about to be replaced.
let groupsRequest = 0;

async function loadGroups() {
  const key = $("group-by").value.trim();
  if (!key) return;
  const request = ++groupsRequest;
  $("groups-table").tBodies[0].innerHTML = "";
  let p;
  try {
    p = await api("QueryService/GetPrevalence", { metric: state.metric, groupBy: key, ...queryOptions() });
  } catch (e) {
    if (request === groupsRequest) showError(e.message);
    return;
  }
  if (request !== groupsRequest) return;
  const groups = p.groups || [];
  if (isCategorical()) {
    drawShareGroups(key, groups);
    return;
  }
  setHeader("groups-table", ["value", "n", "estimate", "interval"]);
  if (state.groupsChart) state.groupsChart.destroy();
  state.groupsChart = new Chart($("groups-chart"), {
    type: "bar",
    data: { labels: groups.map((g) => g.groupValue + (g.suppressed ? " (suppressed)" : "")),
      datasets: [{ label: "estimate (%) by " + key, data: groups.map((g) => (g.suppressed ? null : g.estimateUnbiased * 100)), backgroundColor: "rgba(54,112,196,0.6)" }] },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: "prevalence (%)" } } },
      plugins: { whiskers: { intervals: groups.map((g) => (g.suppressed ? null : [g.ciLower, g.ciUpper])) } } },
    plugins: [whiskers],
  });
  const body = $("groups-table").tBodies[0];
  body.innerHTML = "";
  for (const g of groups) {
    const row = body.insertRow();
    row.dataset.group = g.groupValue;
    cell(row, g.groupValue);
    cell(row, g.n, "num").dataset.value = g.n;
    const est = cell(row, g.suppressed ? "suppressed" : pct(g.estimateUnbiased), "num");
    est.dataset.value = g.suppressed ? "" : g.estimateUnbiased;
    const iv = cell(row, g.suppressed ? "" : interval(g), "num");
    iv.dataset.lower = g.ciLower; iv.dataset.upper = g.ciUpper;
  }
}

// A categorical metric by label: grouped bars (one colour per category) and a table with each
// group's unbiased estimate and simultaneous interval per category.
function drawShareGroups(key, groups) {
  const names = categories();
  if (state.groupsChart) state.groupsChart.destroy();
  state.groupsChart = new Chart($("groups-chart"), {
    type: "bar",
    data: { labels: groups.map((g) => g.groupValue + (g.suppressed ? " (suppressed)" : "")),
      datasets: names.map((name, v) => ({ label: name, backgroundColor: categoryColor(v, 0.7),
        data: groups.map((g) => (g.suppressed || !g.shares || !g.shares[v] ? null : g.shares[v].estimateUnbiased * 100)) })) },
    options: { animation: false, maintainAspectRatio: false,
      scales: { y: { title: { display: true, text: `share (%) by ${key}` } } } },
  });
  setHeader("groups-table", ["value", "n", ...names.map((n) => `${n}: estimate [simultaneous interval]`)]);
  const body = $("groups-table").tBodies[0];
  body.innerHTML = "";
  for (const g of groups) {
    const row = body.insertRow();
    row.dataset.group = g.groupValue;
    cell(row, g.groupValue);
    cell(row, g.n, "num").dataset.value = g.n;
    names.forEach((name, v) => {
      const s = g.shares && g.shares[v];
      const td = cell(row, g.suppressed ? "suppressed" : s ? `${pct(s.estimateUnbiased)} ${simultaneous(s)}` : "", "num");
      td.dataset.category = name;
      if (s && !g.suppressed) { td.dataset.value = s.estimateUnbiased; td.dataset.lower = s.simultaneousLower; td.dataset.upper = s.simultaneousUpper; }
    });
  }
}

async function loadDifference() {
  const split = $("diff-split").value;
  if (!split) { showError("difference: choose the time that splits the two windows"); return; }
  const at = String(Math.floor(Date.parse(split + "Z") / 1000 / HOUR) * HOUR);
  try {
    clearError();
    const d = await api("QueryService/GetDifference", {
      first: { metric: state.metric, endTimeSeconds: at }, second: { metric: state.metric, startTimeSeconds: at },
      confidenceLevel: Number(selected("level")) });
    $("diff-result").textContent = `before: ${pct(d.first.estimateUnbiased)} (n ${d.first.n}); after: ${pct(d.second.estimateUnbiased)} (n ${d.second.n}); ` +
      `difference ${pct(d.difference)}, ${(d.confidenceLevel * 100).toFixed(1)} % interval [${pct(d.ciLower)}, ${pct(d.ciUpper)}]`;
    $("diff-result").dataset.value = d.difference;
    const table = $("diff-shares");
    table.hidden = !(d.shares && d.shares.length);
    if (d.shares && d.shares.length) {
      $("diff-result").textContent = `first window n ${d.first.n}, second window n ${d.second.n}; ` +
        `${(d.confidenceLevel * 100).toFixed(1)} % Wald interval of each category's difference (first - second):`;
      const body = table.tBodies[0];
      body.innerHTML = "";
      d.shares.forEach((s, v) => {
        const row = body.insertRow();
        row.dataset.category = s.category;
        cell(row, s.category);
        cell(row, pct(d.first.shares[v].estimateUnbiased), "num");
        cell(row, pct(d.second.shares[v].estimateUnbiased), "num");
        cell(row, pct(s.difference), "num").dataset.value = s.difference;
        const iv = cell(row, interval(s), "num");
        iv.dataset.lower = s.ciLower; iv.dataset.upper = s.ciUpper;
      });
    }
  } catch (e) {
    $("diff-shares").hidden = true;
    $("diff-result").textContent = "";
    showError(e.message);
  }
}

function addFigure(list, name, text) {
  const dt = document.createElement("dt"); dt.textContent = name;
  const dd = document.createElement("dd"); dd.textContent = text;
  list.append(dt, dd);
}

async function loadDesign() {
  const prior = Number($("prior").value);
  const halfWidth = Number($("half-width").value);
  const m = state.metrics.find((x) => x.name === state.metric);
  const design = m ? { design: m.design.parameters } : { design: { twoCoin: {} } };
  const categorical = m && m.categories && m.categories.length > 0;
  try {
    // A categorical design is described through its metric (the metric fixes k).
    const d = await api("QueryService/DescribeDesign", categorical ? { metric: m.name, prior } : { ...design, prior });
    const list = $("design-figures");
    list.innerHTML = "";
    if (categorical) {
      const c = d.design.parameters.categorical || {};
      addFigure(list, "design", `categorical ${c.mechanism} v${d.design.version}: k = ${d.design.categories}` +
        `${d.design.hashBuckets ? ", g = " + d.design.hashBuckets + " hash buckets" : ""} (p* = ${d.design.a}, q* = ${d.design.b})`);
      addFigure(list, "epsilon (nats)", Number(d.design.epsilon).toFixed(4));
      addFigure(list, "prior", pct(d.prior) + " for one category");
      addFigure(list, "posterior after a report supporting it", pct(d.posteriorGivenYes));
      addFigure(list, "posterior after a report not supporting it", pct(d.posteriorGivenNo));
      addFigure(list, "mutual information", Number(d.mutualInformationBits).toFixed(4) + " bits of " + Number(d.entropyBits).toFixed(4) + " (that category against the rest)");
      const plan = $("plan");
      plan.innerHTML = "";
      try {
        // Worst case over the shares: the planner needs no guess of them.
        const p = await api("QueryService/PlanSurvey", { ...design, categories: m.categories, halfWidth, confidenceLevel: Number(selected("level")), assumedPrevalence: -1 });
        const level = `${(p.confidenceLevel * 100).toFixed(1)} %`;
        addFigure(plan, "reports needed, all shares together", `${p.reportsNeededSimultaneousWorstCase} for ±${pct(halfWidth)} on all ${m.categories.length} shares at ${level} (${p.simultaneousMethod}, worst case)`);
        addFigure(plan, "reports needed, one share alone", `${p.reportsNeededWorstCase} for ±${pct(halfWidth)} at ${level} (worst case)`);
      } catch (e) {
        addFigure(plan, "planner", "not available for this categorical design on this collector (" + e.message + ")");
      }
      return;
    }
    addFigure(list, "design", `${designName(d.design)}${d.design.version ? " v" + d.design.version : ""} (a = ${d.design.a}, b = ${d.design.b})`);
    addFigure(list, "epsilon (nats)", d.design.epsilonInfinite ? "infinite" : Number(d.design.epsilon).toFixed(4));
    addFigure(list, "prior", pct(d.prior));
    addFigure(list, "posterior after a \"yes\" report", pct(d.posteriorGivenYes));
    addFigure(list, "posterior after a \"no\" report", pct(d.posteriorGivenNo));
    addFigure(list, "mutual information", Number(d.mutualInformationBits).toFixed(4) + " bits of " + Number(d.entropyBits).toFixed(4));
    const p = await api("QueryService/PlanSurvey", { ...design, halfWidth, confidenceLevel: Number(selected("level")), assumedPrevalence: prior });
    const plan = $("plan");
    plan.innerHTML = "";
    addFigure(plan, "reports needed", `${p.reportsNeeded} at prevalence ${pct(prior)} for ±${pct(halfWidth)} at ${(p.confidenceLevel * 100).toFixed(1)} %`);
    addFigure(plan, "worst case", p.reportsNeededWorstCase);
    addFigure(plan, "variance vs a direct question", Number(p.varianceInflation).toFixed(2) + "×");
  } catch (e) {
    showError(e.message);
  }
}

function init() {
  $("token").value = token();
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem("deniable.token", $("token").value.trim());
    loadMetrics();
  });
  $("token-forget").addEventListener("click", () => { sessionStorage.removeItem("deniable.token"); $("token").value = ""; loadMetrics(); });
  for (const id of ["method", "level"]) $(id).addEventListener("change", () => state.metric && selectMetric(state.metric));
  $("simultaneous").addEventListener("change", () => state.metric && Promise.all([loadPrevalence(), loadGroups()]));
  $("bucket").addEventListener("change", () => state.metric && loadSeries());
  $("series-band").addEventListener("change", () => state.metric && loadSeries());
  $("group-go").addEventListener("click", () => state.metric && loadGroups());
  $("diff-go").addEventListener("click", () => state.metric && loadDifference());
  $("design-go").addEventListener("click", loadDesign);
  const split = new Date(Date.now() - 24 * HOUR * 1000);
  $("diff-split").value = split.toISOString().slice(0, 13) + ":00";
  if (typeof Chart === "undefined") showError("Chart.js did not load; charts are unavailable.");
  loadMetrics();
  loadDesign();
}

init();
