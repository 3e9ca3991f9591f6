// The JS QueryClient against a real collector (tests/interop/js_query_test.py drives it):
//   node js_query.mjs HTTP_BASE GRPC_BASE METRIC NOW_SECONDS
// Prints one JSON line with the answers; the Python side checks them.
import { QueryClient } from '../../client/js/src/index.js';

const [base, grpcBase, metric, nowText] = process.argv.slice(2);
const now = () => Number(nowText) * 1000;
const q = new QueryClient({ baseUrl: base, now });
const day = 86400;
const t = Number(nowText);
const prevalence = await q.getPrevalence({ metric });
const series = await q.getSeries({ metric, start: '-3d', end: t + day, bucket: 'DAY' });
const difference = await q.getDifference({ metric, first: [t - 2 * day, t - day], second: [t - day, t + day] });
const breakdown = await q.getBreakdown({ metric, groupBy: 'region' });
// Today's window, fixed-n and anytime-valid (issue 41), and the anytime series bucket.
const today = Math.floor(t / day) * day;
const fixedToday = await q.getPrevalence({ metric, start: today, end: today + day });
const anytimeToday = await q.getPrevalence({ metric, start: today, end: today + day, interval: 'ANYTIME' });
const anytimeSeries = await q.getSeries({ metric, start: today, end: today + day, interval: 'ANYTIME' });
let unknownLabel = null;
try {
  await q.getBreakdown({ metric, groupBy: '' });
} catch (e) {
  unknownLabel = e.code;
}
let grpcPort = null;
try {
  await new QueryClient({ baseUrl: grpcBase, timeoutMs: 5000 }).getPrevalence({ metric });
} catch (e) {
  grpcPort = { code: e.code, message: e.message };
}
console.log(JSON.stringify({
  prevalence, series, difference, breakdown, unknownLabel, grpcPort, fixedToday, anytimeToday, anytimeSeries,
}));
