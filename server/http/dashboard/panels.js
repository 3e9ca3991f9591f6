// Panels, the error banner, API calls and tables with their CSV. A panel is emptied the moment
// its request starts (begin), filled only by its newest request's answer, and emptied again if
// that fails; CLEAR (dashboard.js) says how each panel is emptied.
"use strict";

// ---- The error banner lists the current error of each panel (never one left from before).
const errors = {};
function setError(panel, message) {
  if (message) errors[panel] = message; else delete errors[panel];
  const box = $("error");
  const text = [...new Set(Object.values(errors))].join("\n");
  box.textContent = text;
  box.hidden = !text;
}

// ---- Panels. begin() numbers the request, empties the panel and marks it loading; only the
// newest request of a panel may fill it (ready) or mark it failed (error, emptied again).
const generation = {};
function panelElement(name) { return document.querySelector(`[data-panel="${name}"]`); }
function setStatus(name, panelState, text) {
  panelElement(name).dataset.state = panelState;
  $(name + "-status").textContent = text;
}
function begin(name) {
  generation[name] = (generation[name] || 0) + 1;
  CLEAR[name]();
  setError(name, "");
  setStatus(name, "loading", "loading\u2026");
  return generation[name];
}
const current = (name, gen) => generation[name] === gen;
function ready(name, gen) { if (current(name, gen)) setStatus(name, "ready", ""); }
function fail(name, gen, e) {
  if (!current(name, gen)) return;
  CLEAR[name]();
  setStatus(name, "error", "no figures: " + e.message);
  setError(name, e.message);
}
// Marks a panel as not asked (for example no metric selected), holding nothing.
function idle(name, text) {
  generation[name] = (generation[name] || 0) + 1;
  CLEAR[name]();
  setError(name, "");
  setStatus(name, "idle", text || "");
}

// POST /v1/<method> with the JSON request; resolves with the answer or rejects with an Error
// whose message is the API's error message (it names the field).
async function api(method, request) {
  const headers = { "Content-Type": "application/json" };
  if (token()) headers["Authorization"] = "Bearer " + token();
  let response;
  try {
    response = await fetch("/v1/" + method, { method: "POST", headers, body: JSON.stringify(request || {}) });
  } catch (e) {
    throw new Error(`${method}: cannot reach the collector: ${e.message}`);
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const err = body.error || {};
    throw new Error(`${method}: ${response.status} ${err.status || ""}: ${err.message || response.statusText}`);
  }
  return body;
}

// ---- Tables: filled from rows of cells { text, raw, cls, title, data }; the same rows (raw
// values) are what "Download CSV" writes.
function clearTable(id) {
  $(id).tHead.innerHTML = "";
  $(id).tBodies[0].innerHTML = "";
  delete state.tables[id];
  const button = document.querySelector(`button.csv[data-table="${id}"]`);
  // Tables a panel fills only for some answers show their button only when filled.
  if (button) { button.disabled = true; button.hidden = id === "diff-shares" || id === "live-table"; }
}
function fillTable(id, columns, rows) {
  clearTable(id);
  const head = $(id).tHead.insertRow();
  for (const c of columns) {
    const th = document.createElement("th");
    th.textContent = c.name || c;
    if (c.cls) th.className = c.cls;
    if (c.title) th.title = c.title;
    head.appendChild(th);
  }
  const body = $(id).tBodies[0];
  for (const r of rows) {
    const row = body.insertRow();
    Object.assign(row.dataset, r.data || {});
    r.cells.forEach((c, i) => {
      const td = row.insertCell();
      if (columns[i]) td.dataset.label = columns[i].name || columns[i];  // the header on a phone
      td.textContent = c.text === undefined ? "" : c.text;
      if (c.cls) td.className = c.cls;
      if (c.title) td.title = c.title;
      for (const [k, v] of Object.entries(c.data || {})) if (v !== null && v !== undefined) td.dataset[k] = v;
    });
  }
  state.tables[id] = { columns: columns.map((c) => c.csv || c.name || c), rows: rows.map((r) => r.csv || r.cells.map((c) => (c.raw === undefined ? c.text : c.raw))) };
  const button = document.querySelector(`button.csv[data-table="${id}"]`);
  if (button) { button.disabled = rows.length === 0; button.hidden = false; }
}
function csvField(v) {
  const s = v === null || v === undefined ? "" : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
// The CSV text of a table (RFC 4180, CRLF line ends): a header and one line per row, numbers as
// the API gave them (full precision, fractions not percentages), empty for suppressed values.
function tableCsv(id) {
  const t = state.tables[id];
  if (!t) return "";
  return [t.columns, ...t.rows].map((r) => r.map(csvField).join(",")).join("\r\n") + "\r\n";
}
window.dashboardCsv = tableCsv;
function downloadCsv(id) {
  const text = tableCsv(id);
  if (!text) return;
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  a.download = `${state.metric && id !== "metrics" ? state.metric + "-" : ""}${id}.csv`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}
