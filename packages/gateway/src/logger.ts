/**
 * The gateway's one pino logger: created once by the composition root (app.ts), handed
 * to Fastify (`loggerInstance`) and to every module that logs, at construction. Secrets
 * and payment proofs never reach a log line: lines carry chosen fields only, and the
 * paths below are redacted should a header or secret object be logged anyway.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { writeSync } from 'node:fs';
import { type DestinationStream, type Logger, pino } from 'pino';
import { decimal } from './decimal.ts';

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
const LOG_BUFFER_BYTES = 64 * 1024;
const LOG_FLUSH_MS = 100;
/** Bytes a reader that does not keep up may leave waiting; lines beyond are dropped (and said so). */
const LOG_BACKLOG_BYTES = 16 * 1024 * 1024;
/** How soon a write that found the pipe full is tried again. */
const LOG_RETRY_MS = 10;

/**
 * stdout, written in batches. pino's default destination (sonic-boom) writes every line
 * on its own, asynchronously, on libuv's thread pool. Here lines are copied into a batch
 * buffer outside the JavaScript heap (so no scavenge copies the lines waiting there, as it
 * did when the batch was a string) that is written once it is nearly full (LOG_BUFFER_BYTES),
 * or every LOG_FLUSH_MS, with one synchronous write: stdout is a file, /dev/null or a pipe, and a
 * write that the kernel takes at once costs less than a round trip through the thread pool.
 * A line is out within about LOG_FLUSH_MS; when the process exits, planned or not, the rest
 * is written before it ends; a process killed outright (SIGKILL, power) loses at most the
 * last LOG_FLUSH_MS of lines.
 *
 * A pipe whose reader falls behind fills up. Node makes stdout's fd non-blocking once
 * process.stdout is touched (this does, as any console.log would), so the write then takes
 * part of a batch or answers EAGAIN: the rest waits in a backlog, in order, tried again every
 * LOG_RETRY_MS without blocking the event loop; past LOG_BACKLOG_BYTES new lines are dropped
 * and a warning line says how many bytes were once the reader caught up. A reader that is
 * gone (EPIPE) ends the writing: nothing piles up.
 *
 * Why not sonic-boom: in text mode it measures (flattens) everything waiting on every write
 * and an access line cost 2.2 µs against 1 µs here; a write it has under way when the
 * process exits can be lost; its buffer mode loses lines in its exit flush after a failed
 * write; and it counts a partial write of multi-byte text in characters.
 */
let stdoutDestination: DestinationStream | undefined;
/** One per process, shared by every logger on stdout: one batch, one exit hook, lines in order. */
function bufferedStdout(): DestinationStream {
  stdoutDestination ??= batchedWriter(process.stdout.fd ?? 1);
  return stdoutDestination;
}

/** How long a synchronous flush (exit, pino's flushSync) waits in all for a full pipe. */
const SYNC_WRITE_PATIENCE_MS = 2000;
const PAUSE = new Int32Array(new SharedArrayBuffer(4));
/** Write errors that mean nothing written to the fd will ever be read. */
const FD_GONE = new Set(['EPIPE', 'EBADF', 'ECONNRESET']);

/**
 * The batched line writer on `fd` (see bufferedStdout). `backlogBytes` is for tests: a smaller
 * backlog shows its drops without megabytes that a slow reader must drain in the exit's 2 s.
 */
export function batchedWriter(
  fd: number,
  { backlogBytes: backlogCap = LOG_BACKLOG_BYTES }: { backlogBytes?: number } = {},
): DestinationStream {
  /** The batch: its first `used` bytes are lines not written yet. */
  const batch = Buffer.allocUnsafe(LOG_BUFFER_BYTES);
  let used = 0;
  /** Batches the fd did not take yet, oldest first; the first may be partly written. */
  const backlog: Buffer[] = [];
  let backlogBytes = 0;
  let droppedBytes = 0;
  /** The reader is gone (EPIPE) or the fd refuses writes: nothing more is written. */
  let gone = false;
  let retry: NodeJS.Timeout | null = null;
  let waiting: ((err?: Error) => void)[] = [];

  const giveUp = (): void => {
    gone = true;
    backlog.length = 0;
    backlogBytes = 0;
    used = 0;
  };
  const settled = (): void => {
    if (backlog.length > 0 || waiting.length === 0) return;
    const done = waiting;
    waiting = [];
    for (const cb of done) cb();
  };
  const push = (bytes: Buffer): void => {
    backlog.push(bytes);
    backlogBytes += bytes.length;
  };
  /** The line that says how many bytes were dropped, queued where they went missing. */
  const noteDropped = (): void => {
    const warning = `{"level":40,"time":${Date.now()},"pid":${process.pid},"droppedBytes":${droppedBytes},"msg":"log lines dropped: stdout was not read fast enough"}\n`;
    droppedBytes = 0;
    push(Buffer.from(warning));
  };
  /**
   * Writes the backlog, oldest first. Without a deadline it writes what the fd takes now and
   * leaves the rest for the retry timer; with one it waits (blocking) for a full pipe until
   * then. A write error other than the reader being gone (EAGAIN: a full pipe; ENOSPC, EIO:
   * perhaps passing) is tried again like a full pipe; the cap on the backlog bounds memory.
   */
  const writeBacklog = (deadline: number | null): void => {
    while (!gone) {
      // Caught up after dropping lines (and none written since): say so now.
      if (backlog.length === 0 && droppedBytes > 0) noteDropped();
      const head = backlog[0];
      if (head === undefined) return;
      let n = 0;
      try {
        n = writeSync(fd, head);
      } catch (err) {
        if (FD_GONE.has((err as NodeJS.ErrnoException).code ?? '')) {
          giveUp();
          return;
        }
      }
      backlogBytes -= n;
      if (n === head.length) {
        backlog.shift();
        continue;
      }
      backlog[0] = head.subarray(n);
      if (deadline === null || Date.now() >= deadline) {
        retry ??= setTimeout(drain, LOG_RETRY_MS);
        return;
      }
      Atomics.wait(PAUSE, 0, 0, LOG_RETRY_MS);
    }
  };
  const drain = (): void => {
    retry = null;
    writeBacklog(null);
    settled();
  };
  const enqueue = (bytes: Buffer): void => {
    if (gone) return;
    if (backlogBytes + bytes.length > backlogCap) {
      droppedBytes += bytes.length;
      return;
    }
    if (droppedBytes > 0) noteDropped();
    push(bytes);
    // Behind a write that found the pipe full: it goes with the retry, in order.
    if (retry === null) drain();
  };
  /** The batch's bytes, copied: the batch buffer is written into again at once. */
  const taken = (): Buffer => {
    const bytes = Buffer.from(batch.subarray(0, used));
    used = 0;
    return bytes;
  };
  const out = (): void => {
    if (used === 0) return;
    if (gone) {
      used = 0;
      return;
    }
    // The usual case, nothing held back: the batch itself goes through the one write loop,
    // and only what the fd did not take is copied (the batch is written into again at once).
    if (backlog.length === 0 && retry === null && droppedBytes === 0 && used <= backlogCap) {
      push(batch.subarray(0, used));
      used = 0;
      writeBacklog(null);
      const rest = backlog[0];
      if (rest !== undefined && rest.buffer === batch.buffer) backlog[0] = Buffer.from(rest);
      settled();
      return;
    }
    enqueue(taken());
  };
  /**
   * Everything out before it returns, waiting for a full pipe up to SYNC_WRITE_PATIENCE_MS in
   * all: for pino's flushSync (after a fatal line) and for the process's exit. What a pipe
   * still full after that did not take stays in the backlog for the retry timer (after a fatal
   * line, the process runs on) or is lost with the process (at exit).
   */
  const outNow = (): void => {
    if (retry !== null) {
      clearTimeout(retry);
      retry = null;
    }
    if (used > 0 && !gone) {
      if (droppedBytes > 0) noteDropped();
      push(taken());
    }
    used = 0;
    writeBacklog(Date.now() + SYNC_WRITE_PATIENCE_MS);
    settled();
  };
  setInterval(out, LOG_FLUSH_MS).unref();
  process.on('exit', outNow);
  return {
    write(line: string): void {
      if (gone) return;
      // A UTF-16 code unit is at most 3 bytes of UTF-8: a line that may not fit goes after
      // the batch, and one larger than a batch on its own.
      if (line.length * 3 > LOG_BUFFER_BYTES - used) {
        out();
        if (line.length * 3 > LOG_BUFFER_BYTES) {
          enqueue(Buffer.from(line));
          return;
        }
      }
      used += batch.write(line, used);
    },
    flush(cb?: (err?: Error) => void): void {
      out();
      if (cb === undefined) return;
      if (backlog.length === 0) process.nextTick(cb);
      else waiting.push(cb);
    },
    flushSync: outNow,
  } as DestinationStream;
}

/** A line's fields: strings and numbers; an undefined field is left out. */
export type FlatFields = { readonly [key: string]: string | number | undefined };

/** Writes one line of flat fields at a level (`info`, `debug`, …). */
export type FlatLineWriter = (level: string, fields: FlatFields) => void;

/**
 * What a string must not hold for the writer to quote it as it is: what pino escapes, and
 * surrogates (pino on Node 25 and later escapes a lone one; an emoji goes to pino too).
 */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
/** pino's tracing channel around each line's serialising (APM tools subscribe to it). */
const PINO_AS_JSON = tracingChannel('pino_asJson');

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

/** Whether a for-in over `o` enumerates only its own properties: a plain object, and Object.prototype has no enumerable one. */
function inheritsNothing(o: object): boolean {
  if (Object.getPrototypeOf(o) !== Object.prototype) return false;
  for (const _ in Object.prototype) return false;
  return true;
}

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
    !NEEDS_ESCAPE.test(l[s.messageKeySym]) &&
    l[s.serializersSym]?.[l[s.messageKeySym]] === undefined &&
    l[s.stringifiersSym]?.[l[s.messageKeySym]] === undefined &&
    l[s.streamSym]?.[Symbol.for('pino.metadata')] !== true &&
    msg.length <= 100 &&
    !NEEDS_ESCAPE.test(msg);
  if (!plain) return viaPino;
  const serializers = l[s.serializersSym] ?? {};
  const stringifiers = l[s.stringifiersSym] ?? {};
  const tail = `,"${l[s.messageKeySym]}":"${msg}"${l[s.endSym]}`;
  // pino's default time (epochTime: `,"time":` and Date.now()), its text made once per millisecond.
  let ms = Number.NaN;
  let msText = '';
  const time: () => string =
    l[s.timeSym] === pino.stdTimeFunctions.epochTime
      ? () => {
          const now = Date.now();
          if (now !== ms) {
            ms = now;
            msText = `,"time":${decimal(now)}`;
          }
          return msText;
        }
      : () => l[s.timeSym]();
  /**
   * `,"key":` for a key pino writes as it is, null for one it would treat specially; with the
   * last string written under it and its whole text `,"key":"value"`, which a value equal to
   * it reuses, with no escaping check and nothing joined (most of an access line's strings
   * repeat from line to line: the method, route, code, project), and the same for the last
   * number (a status, a duration in ms).
   */
  type Key = {
    text: string;
    plain: string | undefined;
    plainText: string;
    number: number | undefined;
    numberText: string;
  };
  const keys = new Map<string, Key | null>();
  const keyOf = (key: string): Key | null => {
    let k = keys.get(key);
    if (k === undefined) {
      const special =
        serializers[key] !== undefined ||
        stringifiers[key] !== undefined ||
        stringifiers[s.wildcardFirstSym] !== undefined ||
        key === l[s.errorKeySym] ||
        key.length > 100 ||
        NEEDS_ESCAPE.test(key);
      k = special
        ? null
        : { text: `,"${key}":`, plain: undefined, plainText: '', number: undefined, numberText: '' };
      keys.set(key, k);
    }
    return k;
  };
  const values = logger.levels.values;
  /** The keys written, in order, by the last line, and their keyOf: a line of the same keys (every access line) looks none up. */
  const lastNames: string[] = [];
  const lastKeys: (Key | null)[] = [];
  return (level, fields) => {
    if (!Object.hasOwn(values, level) || !logger.isLevelEnabled(level)) return viaPino(level, fields);
    const num = values[level] as number;
    // pino turns an object with a method, headers and a socket into a request; one watching its
    // tracing channel sees every line it serialises.
    if ((fields.method && fields.headers && fields.socket) || PINO_AS_JSON.hasSubscribers)
      return viaPino(level, fields);
    let props = '';
    // pino writes own properties only; for a plain object nothing else is enumerated unless
    // Object.prototype has an enumerable property, so the check per key is made only then.
    const ownOnly = inheritsNothing(fields);
    let i = 0;
    for (const key in fields) {
      const v = fields[key];
      if (v === undefined || (!ownOnly && !Object.hasOwn(fields, key))) continue;
      let k: Key | null;
      if (lastNames[i] === key) k = lastKeys[i] as typeof k;
      else {
        k = keyOf(key);
        lastNames[i] = key;
        lastKeys[i] = k;
      }
      i++;
      if (k === null) return viaPino(level, fields);
      if (typeof v === 'number') {
        // decimal(): a new number's text stays out of the old generation (decimal.ts). NaN
        // equals nothing, so it is written again each time (as null); -0 is written as 0.
        if (v !== k.number) {
          k.numberText = k.text + (Number.isFinite(v) ? decimal(v) : 'null');
          k.number = v;
        }
        props += k.numberText;
      } else if (typeof v === 'string') {
        if (v !== k.plain) {
          if (v.length > 100 || NEEDS_ESCAPE.test(v)) return viaPino(level, fields);
          k.plainText = `${k.text}"${v}"`;
          k.plain = v;
        }
        props += k.plainText;
      } else return viaPino(level, fields);
    }
    l[s.streamSym].write(l[s.lsCacheSym][num] + time() + l[s.chindingsSym] + props + tail);
  };
}
