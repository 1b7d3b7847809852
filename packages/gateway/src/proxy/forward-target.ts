/**
 * Where a forwarded request goes: origin + base path + endpoint path + query.
 * The caller's query is passed byte-for-byte; only query-style origin auth touches it.
 */

export interface ParsedBase {
  /** `scheme://host[:port]` as undici wants it. */
  origin: string;
  /** Base path with no trailing slash ('' for the root). */
  basePath: string;
}

export type BaseProblem = 'invalid_base_url' | 'scheme_not_allowed';

const cache = new Map<string, ParsedBase | BaseProblem>();
const CACHE_LIMIT = 1024;

/** Parses (and memoises) a registered base URL; fails closed on anything odd. */
export function parseBase(baseUrl: string, allowPrivate: boolean): ParsedBase | BaseProblem {
  const key = allowPrivate ? `1${baseUrl}` : `0${baseUrl}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const parsed = parseUncached(baseUrl, allowPrivate);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, parsed);
  return parsed;
}

function parseUncached(baseUrl: string, allowPrivate: boolean): ParsedBase | BaseProblem {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return 'invalid_base_url';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'scheme_not_allowed';
  if (url.protocol === 'http:' && !allowPrivate) return 'scheme_not_allowed';
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    return 'invalid_base_url';
  }
  let end = url.pathname.length;
  while (end > 0 && url.pathname.charCodeAt(end - 1) === 47 /* / */) end--;
  return { origin: url.origin, basePath: url.pathname.slice(0, end) };
}

/**
 * `basePath` + exactly one slash + `path`, then `?query`. With query auth, every client
 * parameter whose decoded name equals the auth parameter is dropped and ours appended.
 */
export function buildTarget(
  basePath: string,
  path: string,
  query: string,
  queryAuth: { name: string; secret: string } | null,
): string {
  let start = 0;
  while (start < path.length && path.charCodeAt(start) === 47) start++;
  const target = `${basePath}/${start === 0 ? path : path.slice(start)}`;
  let q = query;
  if (queryAuth !== null) {
    const ours = `${encodeURIComponent(queryAuth.name)}=${encodeURIComponent(queryAuth.secret)}`;
    q = q === '' ? ours : `${withoutParam(q, queryAuth.name)}${ours}`;
  }
  return q === '' ? target : `${target}?${q}`;
}

/** The query minus parameters named `name`, with a trailing '&' when anything is left. */
function withoutParam(query: string, name: string): string {
  let kept = '';
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (pair !== '' && decodeName(eq === -1 ? pair : pair.slice(0, eq)) === name) continue;
    kept += `${pair}&`;
  }
  return kept;
}

function decodeName(raw: string): string {
  const spaced = raw.includes('+') ? raw.replaceAll('+', ' ') : raw;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
