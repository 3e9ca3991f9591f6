// Chart helpers and Chart.js plugins: axes that hold every interval, whiskers, version marks.
"use strict";

// ---- Charts.
function destroyChart(canvasId) {
  const chart = typeof Chart !== "undefined" && Chart.getChart(canvasId);
  if (chart) chart.destroy();
  const canvas = $(canvasId);
  canvas.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
  delete canvas.dataset.buckets;
}
// y-axis bounds (percent) holding every value (fractions) given: whiskers and bands are never cut.
function axisBounds(values) {
  const xs = values.map(num).filter((x) => x !== null).map((x) => x * 100);
  if (!xs.length) return { min: 0, max: 100 };
  const lo = Math.min(0, ...xs), hi = Math.max(...xs);
  const step = hi - lo > 40 ? 10 : 5;
  return { min: Math.floor(lo / step) * step, max: Math.max(step, Math.ceil(hi / step) * step) };
}
// y-axis hints (the chart's units) holding every value given; Chart.js rounds them out to ticks.
function suggestedBounds(values) {
  const xs = values.map(num).filter((x) => x !== null);
  return xs.length ? { suggestedMin: Math.min(...xs), suggestedMax: Math.max(...xs) } : {};
}
// A distinct colour per category (k up to 256): hues spread by the golden angle.
function categoryColor(i, alpha) { return `hsla(${Math.round((i * 137.508) % 360)}, 65%, 42%, ${alpha === undefined ? 1 : alpha})`; }

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
        const y0 = scales.y.getPixelForValue(num(lo) * 100), y1 = scales.y.getPixelForValue(num(hi) * 100);
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

// Draws an interval whisker over each bar (chart.options.plugins.whiskers.intervals, fractions
// drawn as percent; with options.scale, values drawn times that scale: 1 for a numeric metric).
const whiskers = {
  id: "whiskers",
  afterDatasetsDraw(chart, args, options) {
    const intervals = (options && options.intervals) || [];
    const scale = options && options.scale !== undefined ? options.scale : 100;
    const { ctx, scales } = chart;
    ctx.save();
    ctx.strokeStyle = "#222";
    intervals.forEach((iv, i) => {
      if (!iv) return;
      const x = scales.x.getPixelForValue(i), lo = scales.y.getPixelForValue(iv[0] * scale), hi = scales.y.getPixelForValue(iv[1] * scale);
      ctx.beginPath();
      ctx.moveTo(x, lo); ctx.lineTo(x, hi);
      ctx.moveTo(x - 6, lo); ctx.lineTo(x + 6, lo);
      ctx.moveTo(x - 6, hi); ctx.lineTo(x + 6, hi);
      ctx.stroke();
    });
    ctx.restore();
  },
};

function designMarks(buckets) {
  const marks = [];
  buckets.forEach((b, i) => {
    const v = b.design && b.design.version;
    if (i > 0 && v && buckets[i - 1].design && buckets[i - 1].design.version !== v) marks.push({ index: i, version: v });
  });
  return marks;
}
const SUPPRESSED_MARK = { label: "suppressed (too few reports)", type: "scatter", pointStyle: "triangle", pointRadius: 7, backgroundColor: "#c0392b", borderColor: "#c0392b" };

// Whiskers over grouped bars: dataset v's bar i gets groups[i].shares[v]'s simultaneous interval.
const groupWhiskers = {
  id: "groupWhiskers",
  afterDatasetsDraw(chart, args, options) {
    const { groups = [], names = [] } = options || {};
    const { ctx, scales } = chart;
    ctx.save();
    ctx.strokeStyle = "#222";
    names.forEach((n, v) => {
      const bars = chart.getDatasetMeta(v).data;
      groups.forEach((g, i) => {
        const s = !suppressed(g) && g.shares && g.shares[v];
        if (!s || !bars[i]) return;
        const x = bars[i].x, lo = scales.y.getPixelForValue(num(s.simultaneousLower) * 100), hi = scales.y.getPixelForValue(num(s.simultaneousUpper) * 100);
        ctx.beginPath();
        ctx.moveTo(x, lo); ctx.lineTo(x, hi);
        ctx.moveTo(x - 3, lo); ctx.lineTo(x + 3, lo);
        ctx.moveTo(x - 3, hi); ctx.lineTo(x + 3, hi);
        ctx.stroke();
      });
    });
    ctx.restore();
  },
};
