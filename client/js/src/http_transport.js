// ReportService over the collector's HTTP/JSON API (docs/http.md): POST /v1/ReportService/<Method>,
// protobuf's JSON mapping, errors as {"error": {"code", "status", "message"}}. Uses fetch
// (browsers, Node 18+).
import { DeniableError, codeFromHttp } from './errors.js';

/** base64 of bytes (the JSON mapping of protobuf `bytes`). */
export function toBase64(bytes) {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

export class HttpTransport {
  /**
   * @param {{baseUrl: string, token?: string, fetch?: typeof fetch}} options
   *   baseUrl: the collector's HTTP listener ("https://collector.example:8443"); token: a
   *   reporter bearer token (sent as Authorization: Bearer ...); fetch: for tests.
   */
  constructor({ baseUrl, token, fetch: fetchImpl } = {}) {
    if (typeof baseUrl !== 'string' || !/^https?:\/\//.test(baseUrl)) {
      throw new DeniableError('INVALID_ARGUMENT',
        `baseUrl: must be an http(s) URL, but is ${JSON.stringify(baseUrl)}`);
    }
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.token = token;
    this.fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
  }

  /** GetDesignResponse (JSON mapping) of `metric`. */
  getDesign(metric, timeoutMs) {
    return this.#call('GetDesign', { metric }, timeoutMs);
  }

  /** SubmitReportsResponse (JSON mapping) for reports in the JSON mapping. */
  submitReports(reports, timeoutMs) {
    return this.#call('SubmitReports', { reports }, timeoutMs);
  }

  #call(method, body, timeoutMs) {
    return postJson(this, `ReportService/${method}`, body, timeoutMs);
  }
}

/**
 * Why fetch got no HTTP answer from `baseUrl`, from its error `e`: Node's fetch says only "fetch
 * failed" and puts the socket's error, with its code, in `e.cause` (a browser gives no cause).
 * Each case keeps that code and message.
 */
function noAnswer(method, baseUrl, e) {
  const cause = e && e.cause;
  const code = cause && typeof cause.code === 'string' ? cause.code : '';
  const detail = cause && cause.message
    ? `${code ? `${code}: ` : ''}${cause.message}` : String(e && e.message ? e.message : e);
  const tls = baseUrl.startsWith('https:');
  if (code === 'ECONNREFUSED') {
    return `${method}: nothing listens at ${baseUrl} (${detail}): is deniable-server running, ` +
      'and started with --http_listen=HOST:PORT at this address?';
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return `${method}: cannot resolve the host of ${baseUrl} (${detail})`;
  }
  if (/CERT|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code)) {
    return `${method}: the TLS certificate of ${baseUrl} is not trusted (${detail}). For a ` +
      'collector whose certificate a private CA signed, start Node with ' +
      'NODE_EXTRA_CA_CERTS=/path/to/ca.pem (a browser: install the CA in its trust store)';
  }
  if (tls && /WRONG_VERSION_NUMBER|^ERR_SSL_/.test(code)) {
    return `${method}: ${baseUrl} does not speak TLS (${detail}): for an HTTP listener ` +
      'started without --tls_cert_file use http://';
  }
  if (!tls && /^UND_ERR_SOCKET$|^ECONNRESET$|^HPE_/.test(code)) {
    return `${method}: ${baseUrl} closed the connection without an HTTP answer (${detail}): if ` +
      "the collector's HTTP listener uses TLS (--tls_cert_file), use https://; if this is its " +
      'gRPC port (--listen, 50051 by default), give the HTTP listener (--http_listen) instead';
  }
  return `${method}: ${detail} (no HTTP answer from ${baseUrl}: baseUrl must be the collector's ` +
    'HTTP listener, which deniable-server serves only when started with --http_listen=HOST:PORT, ' +
    'e.g. http://127.0.0.1:8080; its gRPC port, --listen, 50051 by default, does not speak ' +
    'HTTP/JSON)';
}

/**
 * POSTs `body` to `${baseUrl}/v1/${path}` ("QueryService/GetPrevalence") and returns the answer
 * (JSON), or rejects with a DeniableError: the collector's own code and message, else one mapped
 * from the HTTP status; UNAVAILABLE (with a hint about the port) or DEADLINE_EXCEEDED when no
 * answer came.
 * @param {{baseUrl: string, token?: string, fetch: typeof fetch}} client
 */
export async function postJson({ baseUrl, token, fetch: fetchImpl }, path, body, timeoutMs) {
  const method = path.slice(path.indexOf('/') + 1);
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  let response;
  let text;
  try {
    response = await fetchImpl(`${baseUrl}/v1/${path}`, {
      method: 'POST', headers, body: JSON.stringify(body), signal: abort.signal,
    });
    text = await response.text();
  } catch (e) {
    // No answer: the network, CORS, or the deadline. Transient by the delivery contract.
    if (abort.signal.aborted) {
      throw new DeniableError('DEADLINE_EXCEEDED', `${method}: no answer within ${timeoutMs} ms`);
    }
    throw new DeniableError('UNAVAILABLE', noAnswer(method, baseUrl, e));
  } finally {
    clearTimeout(timer);
  }
  let json;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = undefined;
  }
  if (response.ok && json !== undefined) return json;
  const error = json && json.error;
  if (error && typeof error.status === 'string') {
    throw new DeniableError(error.status, String(error.message ?? ''));
  }
  throw new DeniableError(response.ok ? 'UNAVAILABLE' : codeFromHttp(response.status),
    `${method}: HTTP ${response.status} without a collector answer`);
}
