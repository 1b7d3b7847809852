/**
 * Socket deadlines for the listening server (DESIGN §4.1, configuration.md): a client
 * that sends its headers, or its whole request, too slowly is answered 408 and closed,
 * and an idle keep-alive connection is closed after `keepAliveTimeoutMs`.
 *
 * Node's `requestTimeout` covers *receiving* the request only; sending the response is
 * not limited by it, so a long paid stream or a slow upstream is never cut (the
 * endpoint's own timeout governs those). No socket inactivity timeout is set for the
 * same reason. Node checks these deadlines on an interval (30 s by default, which let a
 * slow-header socket live ~90 s): it is kept a fraction of the headers timeout.
 */
import type { ServerOptions } from 'node:http';
import type { Config } from './config.ts';

export interface ServerTimeoutOptions {
  requestTimeout: number;
  keepAliveTimeout: number;
  http: ServerOptions;
}

/** Checks at least every second, and at least four times per headers timeout. */
export function connectionsCheckingInterval(headersTimeoutMs: number): number {
  return Math.max(25, Math.min(1000, Math.floor(headersTimeoutMs / 4)));
}

/** Fastify factory options (HTTP/1 server) carrying the configured deadlines. */
export function serverTimeoutOptions(
  config: Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs'>,
): ServerTimeoutOptions {
  return {
    // Fastify copies these two onto the server after creating it.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      // Given here too, so Node's own check (headers ≤ request) sees the pair in force.
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connectionsCheckingInterval: connectionsCheckingInterval(config.headersTimeoutMs),
    },
  };
}
