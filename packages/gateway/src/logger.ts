/** pino options: secrets and payment proofs never reach a log line. */
export const REDACT_PATHS = [
  'req.headers["x-payment"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  'headers["x-payment"]',
  'headers.authorization',
  'headers.cookie',
  '*.secret',
  '*.authSecret',
  '*.authSecretEnc',
  '*.accessToken',
  '*.signature',
  'secret',
  'accessToken',
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
