// Heavy-hitters metrics (issue 40): the top values of a metric of strings (GetTopValues, the
// table `deniable top` prints), the detection threshold stated above it. Values come from
// devices: they are written with textContent only (fillTable), never as HTML.
// Loaded after common.js and panels.js, before dashboard.js (index.html).
"use strict";

function isHeavyHitters() { const m = metricInfo(); return designKey(m && m.design) === "heavyHitters"; }

// A value's bytes (base64 in the JSON) as text: valid UTF-8 as it is, with control characters,
// backslashes and invalid bytes written \xNN as `deniable top` does (so two values never look
// alike); `bytes` is the count of bytes.
function valueBytes(b64) {
  const raw = atob(b64 || "");
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}
const hex2 = (x) => "\\x" + x.toString(16).padStart(2, "0");
function stringText(b64) {
  const bytes = valueBytes(b64);
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    return [...bytes].map((x) => (x >= 0x20 && x < 0x7f && x !== 0x5c ? String.fromCharCode(x) : hex2(x))).join("");
  }
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f\\]/g, (c) => hex2(c.charCodeAt(0)));
}

function clearTop() {
  for (const id of ["top-threshold", "top-summary", "top-legend"]) { $(id).textContent = ""; delete $(id).dataset.value; }
  clearTable("top-table");
}

async function loadTop() {
  const gen = begin("top");
  let t;
  try {
    t = await api("QueryService/GetTopValues", { metric: state.metric, confidenceLevel: Number($("level").value), ...rangeRequest() });
  } catch (e) {
    fail("top", gen, e);
    return;
  }
  if (!current("top", gen)) return;
  showTop(t);
  if ((t.values || []).length === 0) setStatus("top", "ready", "no value found in the time range");
  else ready("top", gen);
}

function showTop(t) {
  const level = levelText(t.confidenceLevel);
  const threshold = $("top-threshold");
  threshold.textContent = `Detection threshold ${pct(t.detectionThreshold)}: a value held by a smaller share of the devices ` +
    "may be missed (one as long as the design's max_length is found with probability 0.9 at this share).";
  threshold.dataset.value = num(t.detectionThreshold);
  $("top-summary").textContent = `${count(t.devices)} devices (design version ${t.designVersion}, ` +
    `${round(t.epsilon, 5)} nats per report), ${count(t.estimationReports)} of them in the held-out estimation group` +
    (num(t.reportsOfOlderVersions) ? `; ${count(t.reportsOfOlderVersions)} reports of older design versions not used` : "") + ".";
  $("top-summary").dataset.value = num(t.devices);
  $("top-legend").textContent = `Share: the debiased share of the devices holding the value, with its ${level} interval; ` +
    `simultaneous: all ${count(t.tested)} values tested cover together at ${level} (Sidak, each at ${levelText(t.perValueLevel)}); ` +
    "above threshold: kept by Benjamini-Hochberg at a false discovery rate of at most 1 - level.";
  const values = t.values || [];
  fillTable("top-table", [{ name: "#", cls: "num" }, "value", { name: "share", cls: "num" }, { name: `${level} interval`, cls: "num" },
    { name: "simultaneous interval", cls: "num" }, { name: "devices (estimated)", cls: "num count" }, "above threshold"],
  values.map((v, i) => {
    const text = stringText(v.value);
    return { data: { value: text },
      csv: [text, num(v.share), num(v.lower), num(v.upper), num(v.simultaneousLower), num(v.simultaneousUpper), num(v.count), num(v.reports), v.aboveThreshold === true],
      cells: [{ text: String(i + 1), cls: "num" }, { text, cls: "value", title: `${valueBytes(v.value).length} bytes` },
        { text: pct(v.share), cls: "num", data: { value: num(v.share) } },
        { text: interval(v.lower, v.upper), cls: "num", data: { lower: num(v.lower), upper: num(v.upper) } },
        { text: interval(v.simultaneousLower, v.simultaneousUpper), cls: "num", data: { lower: num(v.simultaneousLower), upper: num(v.simultaneousUpper) } },
        { text: String(Math.round(num(v.count))), cls: "num count", data: { value: num(v.count) } },
        { text: v.aboveThreshold === true ? "yes" : "no", data: { value: v.aboveThreshold === true } }] };
  }));
  state.tables["top-table"].columns = ["value", "share", "ci_lower", "ci_upper", "simultaneous_lower", "simultaneous_upper", "count", "reports", "above_threshold"];
}

// A heavy-hitters design's figures, from the metric (there is no yes/no posterior for strings).
function showHeavyHittersDesign(m) {
  const list = $("design-figures"), h = m.design.parameters.heavyHitters || {};
  addFigure(list, "design", `heavy hitters v${m.design.version}: strings of at most ${h.maxLength} bytes, one randomized bit of a ` +
    `Hadamard count-mean sketch (${h.rows} rows of ${h.width}) per report, ${pct(h.holdoutShare)} of the devices held out for estimation`, "heavyHitters");
  addFigure(list, "epsilon (nats)", round(m.design.epsilon || h.epsilon, 5), String(m.design.epsilon || h.epsilon));
  addFigure($("plan"), "planner", "for heavy hitters: the detection threshold above the top values (docs/statistics.md section 11)");
}
