/**
 * undici connector that refuses non-public origins at dial time (DESIGN §4.9).
 *
 * It resolves the host itself, checks EVERY address, then hands undici's stock connector
 * the checked IP literal (with the original name kept for SNI and certificate checks).
 * Nothing resolves the name a second time, so a DNS answer that changes between check and
 * dial (rebinding) cannot smuggle in a private address.
 */
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { buildConnector } from 'undici';
import { addressCategory, isPublicAddress } from './address-policy.ts';
import { type ResolveHost, resolveWithin, systemResolve } from './origin-url.ts';
import { BlockedAddressError } from './upstream-error.ts';

export interface GuardedConnectorOptions {
  allowPrivate: boolean;
  /** Host name → addresses; default: getaddrinfo with all records. */
  resolve?: ResolveHost;
  /** TCP + TLS handshake budget per address tried, and the bound on resolution. Default 10 s. */
  connectTimeoutMs?: number;
  /**
   * Which addresses may be dialled; default: only public ones. Tests use it to let a single
   * loopback address stand in for "public", since nothing here may touch the internet.
   */
  isAllowed?: (ip: string) => boolean;
  /** Extra trust anchors (tests, private deployments); the system store is used otherwise. */
  tls?: Pick<ConnectionOptions, 'ca'>;
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
  const isAllowed = opts.isAllowed ?? isPublicAddress;

  return function guardedConnect(options, callback) {
    const host = options.hostname;
    if (isIP(host) !== 0) {
      if (!isAllowed(host)) {
        process.nextTick(callback, new BlockedAddressError(host, addressCategory(host)), null);
        return;
      }
      base(options, callback);
      return;
    }

    resolveWithin(resolve, host, timeout).then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(Object.assign(new Error('host did not resolve'), { code: 'ENOTFOUND' }), null);
          return;
        }
        for (const address of addresses) {
          if (!isAllowed(address)) {
            callback(new BlockedAddressError(address, addressCategory(address)), null);
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
