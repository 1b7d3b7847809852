/**
 * Field rules for provider records that JSON schema alone cannot express (or
 * that other modules must agree on, like the endpoint path grammar matched on
 * `/p/:slug/*`). Each check throws ApiError('invalid_request') with a `reason`.
 */
import { parseAmount, USDC_DECIMALS } from '@tollgate/protocol';
import { ApiError } from '../errors.ts';

export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{1,46}[a-z0-9])$';
const SLUG = new RegExp(SLUG_PATTERN);

/** Whether `value` could be a project slug; anything else cannot name a project, so needs no lookup. */
export function isSlug(value: string): boolean {
  return SLUG.test(value);
}

/** Slugs that would be confusing or could impersonate the platform in a protected URL. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'admin',
  'api',
  'apis',
  'app',
  'auth',
  'billing',
  'dashboard',
  'directory',
  'docs',
  'gateway',
  'health',
  'healthz',
  'help',
  'internal',
  'login',
  'logout',
  'metrics',
  'null',
  'operator',
  'platform',
  'readyz',
  'root',
  'settings',
  'static',
  'status',
  'support',
  'system',
  'tollgate',
  'undefined',
  'well-known',
  'www',
]);

export const CATEGORY_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$';

export const ENDPOINT_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export type EndpointMethod = (typeof ENDPOINT_METHODS)[number];

export const MAX_PATH_LENGTH = 512;
const PATH_SEGMENTS = /^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/;

/** Highest price an endpoint may ask: 1000 USDC. Anything above is far more likely a typo than a price. */
export const MAX_PRICE_ATOMIC = 1_000n * 10n ** BigInt(USDC_DECIMALS);
export const MAX_SCHEMA_BYTES = 16 * 1024;
/**
 * How deep a schema may nest (objects and arrays). 16 KB of JSON can nest thousands deep, past
 * what JSON.stringify (and every later reader of the schema) can recurse through; real JSON
 * Schemas nest a few dozen levels at most.
 */
export const MAX_SCHEMA_DEPTH = 64;

export function invalid(message: string, reason: string, extra: Record<string, unknown> = {}): ApiError {
  return new ApiError('invalid_request', message, { reason, ...extra });
}

export function checkSlug(slug: string): void {
  if (RESERVED_SLUGS.has(slug)) throw invalid(`the slug "${slug}" is reserved`, 'reserved_slug');
}

/**
 * Normalises an endpoint path to the registered form: no leading slash, segments of
 * unreserved URL characters, no empty, "." or ".." segments. One leading slash is
 * accepted and dropped, because that is how people write paths.
 */
export function normalizeEndpointPath(raw: string): string {
  const path = raw.startsWith('/') ? raw.slice(1) : raw;
  if (path.length === 0 || path.length > MAX_PATH_LENGTH) {
    throw invalid(`path must be 1..${MAX_PATH_LENGTH} characters`, 'invalid_path');
  }
  if (!PATH_SEGMENTS.test(path)) {
    throw invalid(
      'path segments may contain only A-Z a-z 0-9 . _ ~ - separated by single slashes (no query, no trailing slash)',
      'invalid_path',
    );
  }
  if (path.split('/').some((s) => s === '.' || s === '..')) {
    throw invalid('path must not contain "." or ".." segments', 'invalid_path');
  }
  return path;
}

/** A decimal USDC price ("0.01") to atomic units, bounded by MAX_PRICE_ATOMIC. */
export function parsePrice(value: string): bigint {
  let atomic: bigint;
  try {
    atomic = parseAmount(value, USDC_DECIMALS);
  } catch {
    throw invalid('price must be a decimal USDC amount like "0.01" (at most 6 decimals)', 'invalid_price');
  }
  if (atomic > MAX_PRICE_ATOMIC) throw invalid('price must be at most 1000 USDC', 'invalid_price');
  return atomic;
}

/** JSON schemas the provider attaches for documentation: a JSON object of bounded size. */
export function checkJsonSchemaField(field: string, value: unknown): void {
  if (value === null || value === undefined) return;
  if (depthOver(value, MAX_SCHEMA_DEPTH))
    throw invalid(`${field} must nest at most ${MAX_SCHEMA_DEPTH} levels deep`, 'schema_too_large');
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > MAX_SCHEMA_BYTES) {
    throw invalid(`${field} must be at most ${MAX_SCHEMA_BYTES} bytes of JSON`, 'schema_too_large');
  }
}

/** Whether a JSON value nests objects and arrays more than `max` deep; walked with its own stack. */
function depthOver(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) pending.push([child, depth + 1]);
  }
  return false;
}
