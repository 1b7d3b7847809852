/**
 * The console's only door to the gateway: the real /v1 API with the session's bearer
 * token (kept in sessionStorage, so it dies with the tab). Errors carry the gateway's
 * message from either envelope (docs/errors.md).
 */

const TOKEN_KEY = 'tollgate.console.token';

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * A token handed over by `tollgate console` in the URL fragment (`#token=…`): taken,
 * stored and removed from the address bar and history at once.
 */
export function takeFragmentToken() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token');
  if (!token) return null;
  history.replaceState(null, '', location.pathname + location.search);
  storeToken(token);
  return token;
}

export class ApiError extends Error {
  constructor(status, code, message, reason) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.reason = reason;
  }
}

/** The message of an error body in Tollgate's flat shape or OpenAI's envelope. */
function errorOf(status, body) {
  const e = body && typeof body === 'object' ? body : {};
  if (e.error && typeof e.error === 'object') {
    return new ApiError(status, e.error.code ?? `http_${status}`, e.error.message ?? `HTTP ${status}`);
  }
  const code = typeof e.error === 'string' ? e.error : `http_${status}`;
  const message = typeof e.message === 'string' ? e.message : `the gateway answered HTTP ${status}`;
  return new ApiError(status, code, message, e.reason);
}

/** Fired on `window` when the gateway refuses the token (expired, revoked): the app signs out. */
export const SESSION_ENDED = 'tollgate:session-ended';

/** Calls the gateway; `raw` returns the Response (CSV). A 401 forgets the token and fires SESSION_ENDED. */
export async function api(method, path, body, { raw = false, auth = true } = {}) {
  const headers = { accept: raw ? 'text/csv' : 'application/json' };
  const token = storedToken();
  if (auth && token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      cache: 'no-store',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new ApiError(0, 'gateway_unreachable', 'cannot reach the gateway');
  }
  if (res.ok && raw) return res;
  if (res.status === 204) return undefined;
  let json;
  try {
    json = await res.json();
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    if (res.status === 401 && auth && storedToken()) {
      storeToken(null);
      window.dispatchEvent(new Event(SESSION_ENDED));
    }
    throw errorOf(res.status, json);
  }
  return json;
}

export const enc = encodeURIComponent;

/** `a/b/c` paths of one project. */
export function projectPath(slug, rest = '') {
  return `/v1/projects/${enc(slug)}${rest}`;
}

export function shortId(text, keep = 6) {
  if (!text || text.length <= keep * 2 + 1) return text ?? '';
  return `${text.slice(0, keep)}…${text.slice(-keep)}`;
}

export function formatTime(iso) {
  if (!iso) return '';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
