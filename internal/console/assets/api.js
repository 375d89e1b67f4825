// The bridge's REST API as the signed-in principal. The token lives in sessionStorage (this tab only, gone
// when it closes) and goes out only in the Authorization header of requests to this origin; the bridge sets
// no cookie, so a page of another site cannot make the browser call the API as the person (no CSRF), and the
// bridge refuses cross-origin writes besides (docs/adr/0060-operator-console.md).

const TOKEN_KEY = 'mcp-bridge-console.token';

export const auth = {
  get token() { return sessionStorage.getItem(TOKEN_KEY) || ''; },
  set(token) {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  },
};

// APIError is a non-2xx answer of the API, with the google.rpc.Status the gateway sends decoded: code,
// message, the ErrorInfo reason and the BadRequest field violations.
export class APIError extends Error {
  constructor(httpStatus, body) {
    const status = (body && typeof body === 'object') ? body : {};
    super(status.message || `the bridge answered HTTP ${httpStatus} without a message`);
    this.httpStatus = httpStatus;
    this.code = status.code;
    this.reason = '';
    this.fieldViolations = [];
    for (const d of Array.isArray(status.details) ? status.details : []) {
      const type = String(d['@type'] || '');
      if (type.endsWith('google.rpc.ErrorInfo')) this.reason = String(d.reason || '');
      if (type.endsWith('google.rpc.BadRequest') && Array.isArray(d.fieldViolations)) {
        this.fieldViolations.push(...d.fieldViolations.map((v) => ({ field: String(v.field || ''), description: String(v.description || '') })));
      }
    }
  }

  // unauthenticated says the token is missing or wrong.
  get unauthenticated() { return this.httpStatus === 401; }
}

function headers(withBody) {
  const hs = { Accept: 'application/json' };
  if (auth.token) hs.Authorization = `Bearer ${auth.token}`;
  if (withBody) hs['Content-Type'] = 'application/json';
  return hs;
}

// call sends one request and returns the decoded JSON body, or throws an APIError.
export async function call(method, path, body, signal) {
  const resp = await fetch(path, {
    method,
    headers: headers(body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
    signal,
  });
  const text = await resp.text();
  let data;
  try { data = text ? JSON.parse(text) : {}; } catch { data = { message: text }; }
  if (!resp.ok) throw new APIError(resp.status, data);
  return data;
}

// listAll follows next_page_token through at most maxPages pages and returns the concatenated field.
export async function listAll(path, field, maxPages = 20) {
  const out = [];
  let token = '';
  for (let i = 0; i < maxPages; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const page = await call('GET', token ? `${path}${sep}pageToken=${encodeURIComponent(token)}` : path);
    out.push(...(page[field] || []));
    token = page.nextPageToken || '';
    if (!token) break;
  }
  return out;
}

// httpStatusOf maps a google.rpc.Code to the HTTP status the gateway gives it (runtime.HTTPStatusFromCode),
// for an error that arrives inside a stream, after its 200.
const httpStatusOf = { 1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401 };

// stream reads a server-streaming REST method (newline-delimited JSON, each line {"result": …} or
// {"error": …}) and calls onResult for every result until the stream ends, signal aborts, or an error line
// comes (then it throws an APIError). EventSource cannot send an Authorization header; fetch can. A body
// makes it a POST.
export async function stream(path, onResult, signal, body) {
  const resp = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: headers(body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
    signal,
  });
  if (!resp.ok) {
    let data;
    try { data = await resp.json(); } catch { data = {}; }
    // The gateway answers a stream that fails before its first message with {"error": Status}.
    throw new APIError(resp.status, data && data.error ? data.error : data);
  }
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line) continue;
      const msg = JSON.parse(line);
      if (msg.error) throw new APIError(httpStatusOf[msg.error.code] || 500, msg.error);
      if (msg.result) onResult(msg.result);
    }
  }
}

// Paths of the API, with every caller-supplied segment escaped.
export const paths = {
  servers: () => '/v1/servers',
  sessions: () => '/v1/sessions',
  session: (id) => `/v1/sessions/${encodeURIComponent(id)}`,
  tools: (id) => `/v1/sessions/${encodeURIComponent(id)}/tools`,
  callTool: (id, name) => `/v1/sessions/${encodeURIComponent(id)}/tools/${encodeURIComponent(name)}:call`,
  streamTool: (id, name) => `/v1/sessions/${encodeURIComponent(id)}/tools/${encodeURIComponent(name)}:stream`,
  events: (id) => `/v1/sessions/${encodeURIComponent(id)}/events`,
  requests: (id) => `/v1/sessions/${encodeURIComponent(id)}/requests`,
  respond: (id, rid) => `/v1/sessions/${encodeURIComponent(id)}/requests/${encodeURIComponent(rid)}:respond`,
  cancelCall: (id, cid) => `/v1/sessions/${encodeURIComponent(id)}/calls/${encodeURIComponent(cid)}:cancel`,
};
