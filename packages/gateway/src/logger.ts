/**
 * The gateway's one pino logger: created once by the composition root (app.ts), handed
 * to Fastify (`loggerInstance`) and to every module that logs, at construction. Secrets
 * and payment proofs never reach a log line: lines carry chosen fields only, and the
 * paths below are redacted should a header or secret object be logged anyway.
 */
import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers["x-payment"]',
  'req.headers["payment-signature"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  'headers["x-payment"]',
  'headers["payment-signature"]',
  'headers.authorization',
  'headers.cookie',
  '*.secret',
  '*.authSecret',
  '*.authSecretEnc',
  '*.accessToken',
  '*.apiKey',
  '*.signature',
  'secret',
  'accessToken',
  'apiKey',
];

export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req(req: { method: string; url: string; id: unknown; headers: Record<string, unknown> }) {
        // Never log the query string: provider origin auth may travel there.
        return { id: req.id, method: req.method, path: req.url.split('?')[0] };
      },
    },
  };
}

/**
 * The logger at `level` (LOG_LEVEL), writing JSON lines to stdout or to `stream`
 * (tests collect lines with one).
 */
export function createLogger(level: string, stream?: { write(line: string): void }): Logger {
  return pino(loggerOptions(level), stream as DestinationStream | undefined);
}
