/**
 * Registration-time check of a provider origin (DESIGN §4.9). The same address policy
 * is applied again by the guarded connector on every dial, so this check is about early,
 * explainable rejection; the dial-time check is the one that stops DNS rebinding.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { addressCategory } from './address-policy.ts';

export type ResolveHost = (host: string) => Promise<string[]>;

export interface CheckOriginOptions {
  allowPrivate: boolean;
  /** Host name → IP addresses; defaults to the system resolver (getaddrinfo, all records). */
  resolve?: ResolveHost;
  /** Upper bound on resolution; default 5000 ms. */
  resolveTimeoutMs?: number;
}

export type CheckOriginResult =
  | { ok: true; url: URL }
  | { ok: false; reason: OriginRejection; detail?: string };

export type OriginRejection =
  | 'invalid_url'
  | 'scheme_not_allowed'
  | 'userinfo_not_allowed'
  | 'fragment_not_allowed'
  | 'query_not_allowed'
  | 'private_address'
  | 'unresolvable_host';

export const systemResolve: ResolveHost = async (host) => {
  const records = await lookup(host, { all: true, order: 'verbatim' });
  return records.map((r) => r.address);
};

/** Names that resolve to the local host by definition (RFC 6761), whatever DNS says. */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

export async function checkOriginUrl(raw: string, opts: CheckOriginOptions): Promise<CheckOriginResult> {
  // The WHATWG parser silently drops tabs/newlines and trims spaces; a registration that
  // relies on that is suspicious, so refuse rather than store something else than was typed.
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2048 || /[\s\x00-\x1f\x7f]/.test(raw)) {
    return { ok: false, reason: 'invalid_url' };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'invalid_url' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && opts.allowPrivate)) {
    return { ok: false, reason: 'scheme_not_allowed', detail: url.protocol };
  }
  // `http://@host/` parses to an empty userinfo, so look at the raw authority as well.
  const prefix = /^https?:\/\//i.exec(raw);
  if (prefix === null) return { ok: false, reason: 'invalid_url' };
  const authority = raw.slice(prefix[0].length).split(/[/\\?#]/, 1)[0] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) {
    return { ok: false, reason: 'userinfo_not_allowed' };
  }
  if (raw.includes('#')) return { ok: false, reason: 'fragment_not_allowed' };
  // The forwarder appends the caller's query; a base query would be silently merged.
  if (raw.includes('?')) return { ok: false, reason: 'query_not_allowed' };

  // The parser has already turned 2130706433, 0x7f.1, 0177.0.0.1, 127.1 and 127.0.0.1.
  // into 127.0.0.1, and [::ffff:127.0.0.1] into [::ffff:7f00:1]; trailing dots on names stay.
  let host = url.hostname;
  if (host.startsWith('[')) host = host.slice(1, -1);
  while (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return { ok: false, reason: 'invalid_url' };
  if (!host.includes(':')) url.hostname = host;

  if (!opts.allowPrivate && isLocalhostName(host.toLowerCase())) {
    return { ok: false, reason: 'private_address', detail: 'loopback' };
  }

  let addresses: string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = await resolveWithin(opts.resolve ?? systemResolve, host, opts.resolveTimeoutMs ?? 5000);
    } catch {
      return { ok: false, reason: 'unresolvable_host' };
    }
    if (addresses.length === 0) return { ok: false, reason: 'unresolvable_host' };
  }
  if (!opts.allowPrivate) {
    for (const address of addresses) {
      const category = addressCategory(address);
      if (category !== 'public') return { ok: false, reason: 'private_address', detail: category };
    }
  }
  return { ok: true, url };
}

/**
 * `resolve(host)` bounded by `ms` (a timeout rejects with code EAI_AGAIN); an answer that is
 * not an array counts as no addresses. Shared by the registration check and the dial-time guard.
 */
export function resolveWithin(resolve: ResolveHost, host: string, ms: number): Promise<string[]> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      reject(Object.assign(new Error('host resolution timed out'), { code: 'EAI_AGAIN' }));
    }, ms);
    resolve(host).then(
      (addresses) => {
        clearTimeout(timer);
        resolvePromise(Array.isArray(addresses) ? addresses : []);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
