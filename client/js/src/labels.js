// Report labels: the collector's rules (common/include/deniable/common/labels.h), checked before
// a report is randomized or queued, with the C++ SDK's messages. At most 4 labels per report;
// keys match [a-z][a-z0-9_]{0,31}, values [A-Za-z0-9_.:-]{1,32}. Labels travel and are stored
// in the clear: never identifying or free-text values.
import { DeniableError } from './errors.js';

export const MAX_LABELS = 4;
const KEY = /^[a-z][a-z0-9_]{0,31}$/;
const VALUE = /^[A-Za-z0-9_.:-]{1,32}$/;
const ECHO = 64;  // characters of a refused key or value repeated in a message

function echo(text) {
  const shown = JSON.stringify(text.slice(0, ECHO));
  return text.length <= ECHO ? shown : `${shown}... (${text.length} characters)`;
}

/**
 * The labels of one report: the reporter's, with `labels` (this report's) added, a key in both
 * taking this report's value. When `labels` has any, the merged set is checked: throws
 * DeniableError INVALID_ARGUMENT "labels: at most 4 labels, but has N",
 * "labels[<key>]: key must match ..." or "labels[\"key\"]: value must match ...".
 */
export function mergedLabels(reporterLabels, labels) {
  if (labels === undefined || labels === null) return { ...reporterLabels };
  if (typeof labels !== 'object' || Array.isArray(labels)) {
    throw new DeniableError('INVALID_ARGUMENT', 'labels: must be an object of string values');
  }
  if (Object.keys(labels).length === 0) return { ...reporterLabels };
  const out = { ...reporterLabels, ...labels };
  const keys = Object.keys(out).sort();
  if (keys.length > MAX_LABELS) {
    throw new DeniableError('INVALID_ARGUMENT', `labels: at most ${MAX_LABELS} labels, but has ${keys.length}`);
  }
  for (const key of keys) {
    if (!KEY.test(key)) {
      throw new DeniableError('INVALID_ARGUMENT', `labels[${echo(key)}]: key must match [a-z][a-z0-9_]{0,31}`);
    }
    const value = out[key];
    if (typeof value !== 'string' || !VALUE.test(value)) {
      throw new DeniableError('INVALID_ARGUMENT',
        `labels["${key}"]: value must match [A-Za-z0-9_.:-]{1,32}, but is ${echo(String(value))}`);
    }
  }
  return out;
}
