/**
 * The gateway's one pino logger: created once by the composition root (app.ts), handed
 * to Fastify (`loggerInstance`) and to every module that logs, at construction. Secrets
 * and payment proofs never reach a log line: lines carry chosen fields only, and the
 * paths below are redacted should a header or secret object be logged anyway.
 */
import { writeSync } from 'node:fs';
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
 * The logger at `level` (LOG_LEVEL), writing JSON lines to stdout (bufferedStdout) or to
 * `stream` (tests collect lines with one).
 */
export function createLogger(level: string, stream?: { write(line: string): void }): Logger {
  return pino(loggerOptions(level), (stream as DestinationStream | undefined) ?? bufferedStdout());
}

/** Lines are written once this many bytes are waiting, and by a flush every LOG_FLUSH_MS. */
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 100;

/**
 * stdout, written in batches. pino's default destination is asynchronous but unbuffered:
 * every line (an access line per request) is its own write on libuv's thread pool. Here
 * lines are joined into a batch that goes to sonic-boom once LOG_BUFFER_BYTES are waiting,
 * or every LOG_FLUSH_MS; sonic-boom writes each batch at once (or right after the write
 * under way), so a line is out within about LOG_FLUSH_MS. When the process exits, planned
 * or not, pino flushes sonic-boom synchronously and `exit` below writes the batch still
 * being joined: nothing is lost; a process killed outright (SIGKILL, power) loses at most
 * the last LOG_FLUSH_MS of lines.
 *
 * Why the batch is joined here and not by sonic-boom (its minLength): sonic-boom's text
 * mode measures the UTF-8 length of everything waiting on every write, which flattens it,
 * about 2 KB copied per line with 4 KB batched (3 µs of a 402's CPU); its buffer mode loses
 * lines in its exit flush after a failed write. Here a line costs a string append.
 * sonic-boom's write is looked up on every call: pino replaces it with a no-op once stdout's
 * reader is gone (EPIPE), and then nothing may pile up.
 */
let stdoutDestination: DestinationStream | undefined;
/** One per process, shared by every logger on stdout: one batch, one exit hook, lines in order. */
function bufferedStdout(): DestinationStream {
  stdoutDestination ??= batchedStdout();
  return stdoutDestination;
}

function batchedStdout(): DestinationStream {
  const fd = process.stdout.fd ?? 1;
  const boom = pino.destination({ dest: fd, sync: false, minLength: 0 });
  let batch = '';
  const out = (): void => {
    if (batch === '') return;
    const text = batch;
    batch = '';
    boom.write(text);
  };
  /**
   * Everything out before it returns: sonic-boom's queue, then the batch being joined, both
   * with synchronous writes (handing the batch to sonic-boom would start an asynchronous
   * one). For pino's flushSync (after a fatal line) and for the process's exit, after pino's
   * own exit flush of sonic-boom or before it: either way the older lines go first.
   */
  const outNow = (): void => {
    try {
      boom.flushSync();
    } catch {
      // Already ended by pino's own exit handling (it flushed then), or stdout is gone.
    }
    if (batch === '') return;
    const text = batch;
    batch = '';
    try {
      writeSync(fd, text);
    } catch {
      // stdout is gone (EPIPE) or refuses the write: there is nowhere left to write to.
    }
  };
  setInterval(out, LOG_FLUSH_MS).unref();
  process.on('exit', outNow);
  return {
    write(line: string): void {
      batch += line;
      if (batch.length >= LOG_BUFFER_BYTES) out();
    },
    flush(cb?: (err?: Error) => void): void {
      out();
      boom.flush(cb);
    },
    flushSync: outNow,
  } as DestinationStream;
}
