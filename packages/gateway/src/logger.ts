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

/** A line's fields: strings and numbers; an undefined field is left out. */
export type FlatFields = { readonly [key: string]: string | number | undefined };

/** Writes one line of flat fields at a level (`info`, `debug`, …). */
export type FlatLineWriter = (level: string, fields: FlatFields) => void;

/** What a string must not hold for the writer to quote it as it is (pino escapes these). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/**
 * `logger[level](fields, msg)` for lines of flat fields, written the way pino writes them,
 * byte for byte (logger.test.ts compares the two), with less of pino's generic work: the
 * access line (one per request) is the only caller. pino's own call costs about 3 KB of
 * garbage a line (an escaped copy of every key, its rest arguments, its message format);
 * here a key's `,"key":` is made once.
 *
 * It uses pino's exported symbols for the parts of a line the logger owns (the level's
 * `{"level":30`, the time, the bindings, the end) and writes to the logger's stream. Where
 * the logger has something this does not do (a mixin, hooks, a log formatter, a nested key,
 * a message prefix, a stream that wants metadata, a serializer or stringifier for a field)
 * or a value is other than a plain short string or a number, it hands the line to pino.
 */
type PinoSymbol =
  | 'chindingsSym'
  | 'endSym'
  | 'errorKeySym'
  | 'formattersSym'
  | 'hooksSym'
  | 'lsCacheSym'
  | 'messageKeySym'
  | 'mixinSym'
  | 'msgPrefixSym'
  | 'nestedKeySym'
  | 'serializersSym'
  | 'streamSym'
  | 'stringifiersSym'
  | 'timeSym'
  | 'wildcardFirstSym';

export function flatLineWriter(logger: Logger, msg: string): FlatLineWriter {
  // msgPrefixSym is pino's (lib/symbols.js) but missing from its types.
  const s = pino.symbols as unknown as Record<PinoSymbol, symbol>;
  // biome-ignore lint/suspicious/noExplicitAny: pino's symbol-keyed internals are not typed
  const l = logger as any;
  const viaPino: FlatLineWriter = (level, fields) =>
    (logger as unknown as Record<string, (o: object, m: string) => void>)[level]!(fields, msg);
  const hooks = l[s.hooksSym] ?? {};
  const plain =
    !l[s.mixinSym] &&
    !hooks.logMethod &&
    !hooks.streamWrite &&
    !l[s.formattersSym]?.log &&
    !l[s.nestedKeySym] &&
    typeof l[s.msgPrefixSym] !== 'string' &&
    typeof l[s.messageKeySym] === 'string' &&
    l[s.streamSym]?.[Symbol.for('pino.metadata')] !== true &&
    msg.length <= 100 &&
    !NEEDS_ESCAPE.test(msg);
  if (!plain) return viaPino;
  const serializers = l[s.serializersSym] ?? {};
  const stringifiers = l[s.stringifiersSym] ?? {};
  const tail = `,${JSON.stringify(l[s.messageKeySym])}:"${msg}"${l[s.endSym]}`;
  // pino's default time (epochTime: `,"time":` and Date.now()), its text made once per millisecond.
  let ms = Number.NaN;
  let msText = '';
  const time: () => string =
    l[s.timeSym] === pino.stdTimeFunctions.epochTime
      ? () => {
          const now = Date.now();
          if (now !== ms) {
            ms = now;
            msText = `,"time":${now}`;
          }
          return msText;
        }
      : () => l[s.timeSym]();
  /** `,"key":` for a key pino writes as it is, null for one it would treat specially. */
  const keys = new Map<string, string | null>();
  const keyOf = (key: string): string | null => {
    let k = keys.get(key);
    if (k === undefined) {
      const special =
        serializers[key] !== undefined ||
        stringifiers[key] !== undefined ||
        stringifiers[s.wildcardFirstSym] !== undefined ||
        key === l[s.errorKeySym] ||
        key.length > 100 ||
        NEEDS_ESCAPE.test(key);
      k = special ? null : `,"${key}":`;
      keys.set(key, k);
    }
    return k;
  };
  return (level, fields) => {
    const num = logger.levels.values[level];
    if (num === undefined) return viaPino(level, fields);
    let props = '';
    for (const key in fields) {
      const v = fields[key];
      if (v === undefined || !Object.hasOwn(fields, key)) continue;
      const k = keyOf(key);
      if (k === null) return viaPino(level, fields);
      if (typeof v === 'number') props += k + (Number.isFinite(v) ? v : 'null');
      else if (typeof v === 'string' && v.length <= 100 && !NEEDS_ESCAPE.test(v)) props += `${k}"${v}"`;
      else return viaPino(level, fields);
    }
    l[s.streamSym].write(l[s.lsCacheSym][num] + time() + l[s.chindingsSym] + props + tail);
  };
}
