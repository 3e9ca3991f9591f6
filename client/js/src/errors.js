// Status codes (the gRPC / absl codes, same numbers and names) and the SDK's error.

/** @type {Readonly<Record<string, number>>} */
export const StatusCode = Object.freeze({
  OK: 0, CANCELLED: 1, UNKNOWN: 2, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5,
  ALREADY_EXISTS: 6, PERMISSION_DENIED: 7, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9,
  ABORTED: 10, OUT_OF_RANGE: 11, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14,
  DATA_LOSS: 15, UNAUTHENTICATED: 16,
});

const NAMES = Object.fromEntries(Object.entries(StatusCode).map(([k, v]) => [v, k]));

/** The name of a numeric code ("UNKNOWN" for a number that is no code). */
export function codeName(number) {
  return NAMES[number] ?? 'UNKNOWN';
}

/** The code of a ReportRejection: UNKNOWN for 0 (a rejection is never OK) and for a number that
 * is no code, as the C++ SDK reads it (tests/conformance/delivery_contract.json). */
export function rejectionCode(number) {
  return number === 0 ? 'UNKNOWN' : codeName(number);
}

/** Thrown (rejected) by the SDK: `code` is a StatusCode name, `message` names the field. */
export class DeniableError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = 'DeniableError';
    this.code = code;
    this.detail = message;
  }
}

/** The delivery contract's one traits function: only INVALID_ARGUMENT is permanent (docs/sdk.md
 * "Delivery contract"; tests/conformance/delivery_contract.json). */
export function isPermanentBatchError(code) {
  return code === 'INVALID_ARGUMENT';
}

// The HTTP status the collector answers for each code (docs/http.md), reversed: used only when
// an error body has no "status" (a proxy's error page, for example).
const FROM_HTTP = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND',
  409: 'ABORTED', 429: 'RESOURCE_EXHAUSTED', 499: 'CANCELLED', 500: 'INTERNAL',
  501: 'UNIMPLEMENTED', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

/** The code for an HTTP error without a JSON error body. 4xx other than the table: a proxy
 * refusing, not the collector judging the report: UNAVAILABLE (kept and retried). */
export function codeFromHttp(status) {
  return FROM_HTTP[status] ?? 'UNAVAILABLE';
}
