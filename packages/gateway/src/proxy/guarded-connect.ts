/**
 * undici connector that refuses non-public origins at dial time (DESIGN §4.9).
 *
 * It resolves the host itself, checks EVERY address, then hands undici's stock connector
 * the checked IP literal (with the original name kept for SNI and certificate checks).
 * Nothing resolves the name a second time, so a DNS answer that changes between check and
 * dial (rebinding) cannot smuggle in a private address.
 */
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { addressCategory } from './address-policy.ts';
import { type ResolveHost, systemResolve } from './origin-url.ts';
import { BlockedAddressError } from './upstream-error.ts';

export interface GuardedConnectorOptions {
  allowPrivate: boolean;
  /** Host name → addresses; default: getaddrinfo with all records. */
  resolve?: ResolveHost;
  /** TCP + TLS handshake budget per address tried, and the bound on resolution. Default 10 s. */
  connectTimeoutMs?: number;
  /** Extra TLS/TCP options for undici's connector (e.g. `ca` in tests). */
  tls?: Omit<buildConnector.BuildOptions, 'timeout' | 'allowH2'>;
}

/** Connect failures after which the next resolved address is worth a try. */
const TRY_NEXT = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function createGuardedConnector(opts: GuardedConnectorOptions): buildConnector.connector {
  const timeout = opts.connectTimeoutMs ?? 10_000;
  const base = buildConnector({ ...opts.tls, timeout, allowH2: false });
  if (opts.allowPrivate) return base;
  const resolve = opts.resolve ?? systemResolve;

  return function guardedConnect(options, callback) {
    const host = options.hostname;
    if (isIP(host) !== 0) {
      const category = addressCategory(host);
      if (category !== 'public') {
        process.nextTick(callback, new BlockedAddressError(host, category), null);
        return;
      }
      base(options, callback);
      return;
    }

    resolveBounded(resolve, host, timeout).then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(Object.assign(new Error('host did not resolve'), { code: 'ENOTFOUND' }), null);
          return;
        }
        for (const address of addresses) {
          const category = addressCategory(address);
          if (category !== 'public') {
            callback(new BlockedAddressError(address, category), null);
            return;
          }
        }
        // The name, not the IP, is what TLS must verify and send as SNI.
        const servername = options.protocol === 'https:' ? options.servername || host : options.servername;
        const attempt = (i: number): void => {
          base({ ...options, hostname: addresses[i]!, servername }, (err, socket) => {
            if (err && i + 1 < addresses.length && TRY_NEXT.has((err as { code?: string }).code ?? '')) {
              attempt(i + 1);
            } else if (err) {
              callback(err, null);
            } else {
              callback(null, socket!);
            }
          });
        };
        attempt(0);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
    );
  };
}

function resolveBounded(resolve: ResolveHost, host: string, ms: number): Promise<string[]> {
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
