import { spawn } from 'node:child_process';
import { tracingChannel } from 'node:diagnostics_channel';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { oldBytesPerCall, youngBytesKeptPerCall } from '../test/support/old-generation.ts';
import { decimal } from './decimal.ts';
import { ACCESS_LOG_FIELDS } from './http/access-log.ts';
import { batchedWriter, type FlatFields, flatLineWriter, loggerOptions } from './logger.ts';

const ACCESS_KEYS = [...ACCESS_LOG_FIELDS];

const LOGGER = fileURLToPath(new URL('./logger.ts', import.meta.url));

/** The line a child writes to stderr when its stdout may be read (`readAfterMark`). */
const MARK = 'read me now';
const markWritten = `process.stderr.write(${JSON.stringify(`${MARK}\n`)});`;

/**
 * Runs `body` in a child whose logger writes to its stdout (a pipe); resolves with the lines it
 * wrote. Its stdout is read from the start, or (`readAfterMark`) once the child wrote MARK to
 * stderr: a fixed delay could end before a slow child got to the state a test needs.
 * `backlogBytes` gives the child's writer a smaller backlog than production's.
 */
function child(
  body: string,
  onLine?: (line: string, kill: () => void) => void,
  readAfterMark = false,
  backlogBytes?: number,
): Promise<string[]> {
  const make =
    backlogBytes === undefined
      ? `import { createLogger } from ${JSON.stringify(LOGGER)};\nconst log = createLogger('info');`
      : `import { pino } from 'pino';\nimport { batchedWriter, loggerOptions } from ${JSON.stringify(LOGGER)};\n` +
        `const log = pino(loggerOptions('info'), batchedWriter(1, { backlogBytes: ${backlogBytes} }));`;
  const script = `${make}\n${body}`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { stdout, stderr } = proc;
  const lines: string[] = [];
  let rest = '';
  stdout.setEncoding('utf8');
  stderr.setEncoding('utf8');
  let said = '';
  stderr.on('data', (chunk: string) => {
    said += chunk;
    if (readAfterMark && said.includes(MARK)) stdout.resume();
  });
  // Not read at first: the pipe fills up and the child's writes wait (or fail with EAGAIN).
  if (readAfterMark) stdout.pause();
  stdout.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      onLine?.(line, () => proc.kill('SIGTERM'));
    }
  });
  return new Promise((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', () => resolve(lines));
  });
}

describe('the stdout logger (buffered)', () => {
  it('writes a lone line out while the process keeps running', async () => {
    // The child logs once and then idles; it is stopped only once the line arrived.
    const lines = await child(`log.info({ n: 1 }, 'lone');\nsetInterval(() => {}, 1000);`, (line, kill) => {
      if (line.includes('"lone"')) kill();
    });
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['lone']);
  });

  it('writes out a line that came while a burst was being written', async () => {
    // A line, then, just before its flush is due, over 4 KB (written at once) and one more line:
    // the flush finds that write under way, and must not leave the last line stranded.
    const lines = await child(
      `setTimeout(() => { log.info({ pad: 'B'.repeat(5000) }, 'burst'); log.info('tail'); }, 100);\nlog.info('first');\nsetInterval(() => {}, 1000);`,
      (line, kill) => {
        if (line.includes('"tail"')) kill();
      },
    );
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['first', 'burst', 'tail']);
  });

  it('loses no line when the process exits right after writing them', async () => {
    const lines = await child(`for (let i = 0; i < 2000; i++) log.info({ i }, 'line');\nprocess.exit(0);`);
    expect(lines).toHaveLength(2000);
    expect(lines.map((l) => JSON.parse(l).i)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it('loses no line when the process exits while nobody reads stdout for a moment (a full pipe)', async () => {
    // About 600 KB of lines, then exit at once: the pipe (64 KB) is full long before; the
    // reader starts as the child exits. Touching process.stdout makes fd 1 non-blocking, as any
    // console.log in the process would: then a write to the full pipe fails with EAGAIN.
    const lines = await child(
      `process.stdout.fd;\nfor (let i = 0; i < 6000; i++) log.info({ i, pad: 'x'.repeat(40) }, 'line');\n${markWritten}\nprocess.exit(0);`,
      undefined,
      true,
    );
    expect(lines).toHaveLength(6000);
    expect(lines.map((l) => JSON.parse(l).i)).toEqual(Array.from({ length: 6000 }, (_, i) => i));
  });

  it('writes the lines a full pipe held back once the reader catches up, in order, while the process runs on', async () => {
    const lines = await child(
      `process.stdout.fd;\nfor (let i = 0; i < 6000; i++) log.info({ i, pad: 'x'.repeat(40) }, 'line');\n${markWritten}\nsetInterval(() => {}, 1000);`,
      (line, kill) => {
        if (JSON.parse(line).i === 5999) kill();
      },
      true,
    );
    expect(lines.map((l) => JSON.parse(l).i)).toEqual(Array.from({ length: 6000 }, (_, i) => i));
  });

  it('drops lines past 16 MB held back for a reader that does not read, and says so once it reads', async () => {
    // 24 MB of lines while nobody reads: the first 16 MB wait, the rest are dropped. Reading
    // starts once the loop is over (a reader that started during it could leave nothing to drop).
    const lines = await child(
      `process.stdout.fd;\nconst pad = 'x'.repeat(900);\nfor (let i = 0; i < 24000; i++) log.info({ i, pad }, 'line');\n${markWritten}\nsetTimeout(() => log.info({ i: -1 }, 'after'), 1500);\nsetInterval(() => {}, 1000);`,
      (line, kill) => {
        if (JSON.parse(line).i === -1) kill();
      },
      true,
    );
    const parsed = lines.map((l) => JSON.parse(l));
    const warning = parsed.findIndex((p) => p.droppedBytes !== undefined);
    expect(warning).toBeGreaterThan(15000);
    expect(parsed[warning]).toMatchObject({
      level: 40,
      msg: 'log lines dropped: stdout was not read fast enough',
    });
    // Before it, the lines that waited, whole and in order. After it, the lines written once
    // there was room again: the loop's last batch if it fitted (it went out 100 ms after the
    // loop, when the backlog may still have room for it), in order up to the last, then 'after'.
    expect(parsed.slice(0, warning).map((p) => p.i)).toEqual(Array.from({ length: warning }, (_, i) => i));
    expect(parsed[warning].droppedBytes).toBeGreaterThan(6_000_000);
    const after = parsed.slice(warning + 1).map((p) => p.i);
    expect(after.at(-1)).toBe(-1);
    const tail = after.slice(0, -1);
    expect(tail).toEqual(Array.from({ length: tail.length }, (_, k) => 24000 - tail.length + k));
  });

  it('says how many bytes it dropped when the process exits right after dropping them', async () => {
    // 2.3 MB of lines against a 1 MB backlog (production's is 16 MB, which a reader on a loaded
    // CI machine did not always take within the 2 s the exit waits). Reading starts once the
    // loop is over (a reader that started during it could leave nothing to drop), right
    // before the exit.
    const lines = await child(
      `process.stdout.fd;\nconst pad = 'x'.repeat(900);\nfor (let i = 0; i < 2400; i++) log.info({ i, pad }, 'line');\n${markWritten}\nprocess.exit(0);`,
      undefined,
      true,
      1024 * 1024,
    );
    const parsed = lines.map((l) => JSON.parse(l));
    // The warning stands where the lines went missing: before the last batch, written at exit.
    const warning = parsed.findIndex((p) => p.droppedBytes !== undefined);
    expect(parsed[warning]).toMatchObject({
      level: 40,
      msg: 'log lines dropped: stdout was not read fast enough',
    });
    expect(parsed[warning].droppedBytes).toBeGreaterThan(500_000);
    expect(parsed.slice(0, warning).map((p) => p.i)).toEqual(Array.from({ length: warning }, (_, i) => i));
    const after = parsed.slice(warning + 1).map((p) => p.i);
    expect(after.at(-1)).toBe(2399);
    expect(after).toEqual(Array.from({ length: after.length }, (_, k) => 2400 - after.length + k));
  });

  it('keeps every line, whole and in order, when a fatal line finds the pipe full for longer than it waits', async () => {
    // pino flushes synchronously after a fatal line; the reader starts only after that flush
    // gave up waiting (2 s) and more lines came: the process runs on, and nothing is cut, lost
    // or turned off.
    const lines = await child(
      `process.stdout.fd;\nfor (let i = 0; i < 3000; i++) log.info({ i, pad: 'x'.repeat(100) }, 'before');\nlog.fatal({ i: 3000 }, 'fatal');\nfor (let i = 3001; i < 3020; i++) log.info({ i }, 'after');\n${markWritten}\nsetInterval(() => {}, 1000);`,
      (line, kill) => {
        if (JSON.parse(line).i === 3019) kill();
      },
      true,
    );
    expect(lines.map((l) => JSON.parse(l).i)).toEqual(Array.from({ length: 3020 }, (_, i) => i));
  });

  it('writes lines of any characters whole and in order across many batches', async () => {
    // Multi-byte text (é, 支, 🪙) in lines of varied sizes, over several 64 KB batches and a flush.
    const lines = await child(
      `for (let i = 0; i < 3000; i++) log.info({ i, text: 'é支🪙'.repeat(i % 37) }, 'line');\nsetTimeout(() => process.exit(0), 300);`,
    );
    expect(lines).toHaveLength(3000);
    lines.forEach((l, i) => {
      const parsed = JSON.parse(l);
      expect(parsed.i).toBe(i);
      expect(parsed.text).toBe('é支🪙'.repeat(i % 37));
    });
  });

  it('keeps no lines in memory once nobody reads stdout', async () => {
    // The reader goes away at once (EPIPE): pino then stops logging. 300,000 lines of about
    // 250 B (75 MB) must not pile up in the process waiting for a write that cannot happen.
    const script = `import { createLogger } from ${JSON.stringify(LOGGER)};
const log = createLogger('info');
const pad = 'x'.repeat(200);
for (let round = 0; round < 300; round++) {
  for (let i = 0; i < 1000; i++) log.info({ i, pad }, 'line');
  await new Promise((r) => setImmediate(r));
}
await new Promise((r) => setTimeout(r, 300));
globalThis.gc?.();
process.stderr.write(JSON.stringify(process.memoryUsage()));
process.exit(0);`;
    const proc = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout.destroy();
    let err = '';
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (d: string) => {
      err += d;
    });
    await new Promise((resolve) => proc.on('close', resolve));
    const usage = JSON.parse(err) as { arrayBuffers: number; heapUsed: number };
    expect(usage.arrayBuffers + usage.heapUsed).toBeLessThan(40 * 1024 * 1024);
  });

  it('loses no line when the process ends by itself, with nothing left to do', async () => {
    // A few lines, well under a batch, and then an empty event loop: no exit call, no error.
    const lines = await child(`for (let i = 0; i < 5; i++) log.info({ i }, 'line');`);
    expect(lines.map((l) => JSON.parse(l).i)).toEqual([0, 1, 2, 3, 4]);
  });

  it('keeps the lines of many loggers on stdout in the order they were written, without a listener per logger', async () => {
    const script = `import { createLogger } from ${JSON.stringify(LOGGER)};
const logs = Array.from({ length: 20 }, () => createLogger('info'));
for (let i = 0; i < 200; i++) logs[i % logs.length].info({ i }, 'line');`;
    const proc = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.setEncoding('utf8');
    proc.stderr.setEncoding('utf8');
    proc.stdout.on('data', (d: string) => {
      out += d;
    });
    proc.stderr.on('data', (d: string) => {
      err += d;
    });
    await new Promise((resolve) => proc.on('close', resolve));
    const order = out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).i);
    expect(order).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(err).not.toMatch(/MaxListenersExceeded/);
  });

  it('has a fatal line out before the call returns, as pino promises (a SIGKILL right after loses nothing)', async () => {
    const lines = await child(
      // libuv's thread pool, where asynchronous writes run, is kept busy: only a synchronous write is out in time.
      `const { pbkdf2 } = await import('node:crypto');\nfor (let i = 0; i < 8; i++) pbkdf2('x', 'y', 2e6, 32, 'sha256', () => {});\n` +
        `log.info('before');\nlog.fatal('fatal');\nprocess.kill(process.pid, 'SIGKILL');\nsetInterval(() => {}, 1000);`,
    );
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['before', 'fatal']);
  });

  it('keeps the lines waiting for their batch outside the JavaScript heap', () => {
    // Every scavenge copies what is live in the young generation: lines held there as a
    // string made each one copy up to a batch of them (issue 14, the 402's tail).
    const fd = openSync('/dev/null', 'w');
    try {
      const line = (i: number) =>
        `{"level":30,"time":${decimal(1_800_000_000_000 + i)},"msg":"${'x'.repeat(100)}"}\n`;
      const held: number[] = [];
      for (let round = 0; round < 3; round++) {
        const out = batchedWriter(fd);
        let length = 0;
        // 300 lines fit one batch: none is written before the measurement.
        const made = youngBytesKeptPerCall((i) => (length += line(i).length), 300);
        const batched = youngBytesKeptPerCall((i) => out.write(line(i)), 300);
        held.push(batched - made);
        (out as { flushSync?: () => void }).flushSync?.();
      }
      // Median of three: a round that a collection shrinks the heap in reads low.
      expect(held.sort((a, b) => a - b)[1]).toBeLessThan(100);
    } finally {
      closeSync(fd);
    }
  });

  it('loses no line when the process dies of an uncaught error', async () => {
    const lines = await child(`log.info('before');\nsetImmediate(() => { throw new Error('boom'); });`);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['before']);
  });
});

describe('flatLineWriter (the access line)', () => {
  /** A logger as the access log makes it: the app's options, a child without redaction. */
  function accessLogger(timestamp?: () => string) {
    const lines: string[] = [];
    const options = { ...loggerOptions('debug'), ...(timestamp ? { timestamp } : {}) };
    const root = pino(options, { write: (line: string) => void lines.push(line) });
    const logger = root.child({}, { redact: { paths: [] } });
    let viaPino = 0;
    for (const level of ['info', 'debug'] as const) {
      const own = logger[level].bind(logger);
      logger[level] = ((...args: Parameters<typeof own>) => {
        viaPino++;
        own(...args);
      }) as typeof own;
    }
    return { logger, lines, viaPino: () => viaPino };
  }
  const fixedTime = () => ',"time":1764000000000';

  const plainString = fc.stringMatching(/^[\w .:/@+=-]{0,100}$/);
  const anyValue = fc.oneof(
    plainString,
    fc.string({ maxLength: 140, unit: 'binary' }),
    fc.string({ maxLength: 20 }).map((x) => `${x}"\\${x}\n`),
    fc.double(),
    fc.integer(),
    fc.constant(undefined),
  );
  const key = fc.constantFrom(...ACCESS_KEYS, 'x-odd"key', 'err', 'msg', 'level', 'time');

  it('writes what pino writes, byte for byte, for any fields', () => {
    fc.assert(
      fc.property(fc.dictionary(key, anyValue), fc.constantFrom('info', 'debug'), (fields, level) => {
        const mine = accessLogger(fixedTime);
        flatLineWriter(mine.logger, 'request')(level, fields);
        const theirs = accessLogger(fixedTime);
        theirs.logger[level](fields, 'request');
        expect(mine.lines).toEqual(theirs.lines);
      }),
      { numRuns: 500 },
    );
  });

  it('writes what pino writes for every line of a sequence, a value after a plain one under the same key too', () => {
    // One writer for many lines: it remembers the last plain string under each key, and a
    // line whose value differs from it (one that needs escaping) is checked again.
    const lineOf = fc.dictionary(fc.constantFrom(...ACCESS_KEYS.slice(0, 4)), anyValue);
    fc.assert(
      fc.property(fc.array(lineOf, { maxLength: 12 }), (sequence) => {
        const mine = accessLogger(fixedTime);
        const write = flatLineWriter(mine.logger, 'request');
        const theirs = accessLogger(fixedTime);
        for (const fields of sequence) {
          write('info', fields);
          theirs.logger.info(fields, 'request');
        }
        expect(mine.lines).toEqual(theirs.lines);
      }),
      { numRuns: 300 },
    );
    const mine = accessLogger(fixedTime);
    const write = flatLineWriter(mine.logger, 'request');
    write('info', { path: '/p/demo/a' });
    write('info', { path: '/p/demo/a"b\\' });
    write('info', { path: '/p/demo/a' });
    expect(mine.lines.map((l) => JSON.parse(l).path)).toEqual(['/p/demo/a', '/p/demo/a"b\\', '/p/demo/a']);
  });

  it('writes a line of plain strings and numbers itself, not through pino', () => {
    fc.assert(
      fc.property(
        fc.record(
          Object.fromEntries(
            ACCESS_KEYS.map((k) => [k, fc.option(fc.oneof(plainString, fc.integer()), { nil: undefined })]),
          ),
        ),
        (fields) => {
          const mine = accessLogger(fixedTime);
          flatLineWriter(mine.logger, 'request')('info', fields);
          const theirs = accessLogger(fixedTime);
          theirs.logger.info(fields, 'request');
          expect(mine.viaPino()).toBe(0);
          expect(mine.lines).toEqual(theirs.lines);
        },
      ),
    );
  });

  it('writes new times and numbers without leaving garbage in the old generation', () => {
    // Every access line has a time, and a number of milliseconds: new numbers, which V8's
    // number-string cache would put in the old generation (decimal.ts).
    const root = pino(loggerOptions('info'), { write: () => {} });
    const write = flatLineWriter(root.child({}, { redact: { paths: [] } }), 'request');
    // A clock that moves on by some milliseconds per line (a spy would keep every call's result).
    const realNow = Date.now;
    let now = 1_800_000_000_000;
    Date.now = () => (now += 7919);
    try {
      const perLine = oldBytesPerCall(
        (i) => write('info', { status: 402, ms: 1_000_000 + i * 7919 }),
        20_000,
      );
      expect(perLine).toBeLessThan(4);
    } finally {
      Date.now = realNow;
    }
  });

  it("writes pino's time, pid and hostname and the logger's bindings", () => {
    const { logger, lines } = accessLogger();
    const before = Date.now();
    flatLineWriter(logger.child({ service: 'tollgate' }), 'request')('info', { status: 402 });
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({
      level: 30,
      pid: process.pid,
      service: 'tollgate',
      status: 402,
      msg: 'request',
    });
    expect(line.time).toBeGreaterThanOrEqual(before);
    expect(line.time).toBeLessThanOrEqual(Date.now());
  });

  it('writes only own fields, as pino does, whatever is inherited', () => {
    const proto = { inherited: 'from a prototype' };
    const child = Object.assign(Object.create(proto), { status: 402, path: '/p/a' });
    const lines = (fields: FlatFields) => {
      const mine = accessLogger(fixedTime);
      flatLineWriter(mine.logger, 'request')('info', fields);
      const theirs = accessLogger(fixedTime);
      theirs.logger.info(fields, 'request');
      expect(mine.lines).toEqual(theirs.lines);
      return mine.lines;
    };
    expect(lines(child)[0]).not.toContain('inherited');
    // Object.prototype itself given an enumerable property (a polluted prototype).
    const polluted = Object.prototype as Record<string, unknown>;
    polluted['polluted'] = 'yes';
    try {
      expect(lines({ status: 402, path: '/p/a' })[0]).not.toContain('polluted');
    } finally {
      delete polluted['polluted'];
    }
  });

  it('writes what pino writes where pino treats a line specially', () => {
    const cases: [object, string, FlatFields][] = [
      [{ level: 'warn' }, 'info', { status: 200 }], // a level not logged: nothing
      [{}, 'toString', { status: 200 }], // not a level (inherited): nothing
      [{ serializers: { msg: (m: string) => m.toUpperCase() } }, 'info', { status: 200 }],
      [{ messageKey: 'm"k' }, 'info', { status: 200 }],
      [{}, 'info', { method: 'GET', headers: 'h', socket: 's' }], // pino's request shape
      [{}, 'info', { text: 'lone \ud800 surrogate', emoji: '🪙' }],
    ];
    for (const [options, level, fields] of cases) {
      const mine: string[] = [];
      const theirs: string[] = [];
      const opts = { timestamp: fixedTime, ...options };
      flatLineWriter(pino(opts, { write: (l: string) => void mine.push(l) }), 'request')(level, fields);
      const logger = pino(opts, { write: (l: string) => void theirs.push(l) }) as unknown as Record<
        string,
        (o: object, m: string) => void
      >;
      logger[level]!(fields, 'request');
      expect(mine).toEqual(theirs);
    }
  });

  it("leaves the line to pino while someone watches pino's serialising (its tracing channel)", () => {
    const { logger, lines } = accessLogger(fixedTime);
    const seen: unknown[] = [];
    const channel = tracingChannel('pino_asJson');
    const watch = {
      start: (m: unknown) => void seen.push(m),
      end() {},
      asyncStart() {},
      asyncEnd() {},
      error() {},
    };
    channel.subscribe(watch);
    try {
      flatLineWriter(logger, 'request')('info', { status: 402 });
    } finally {
      channel.unsubscribe(watch);
    }
    expect(seen).toHaveLength(1);
    expect(lines).toHaveLength(1);
  });

  it('hands the line to pino where pino would do more: a redacting logger, a mixin', () => {
    const lines: string[] = [];
    const stream = { write: (line: string) => void lines.push(line) };
    // The app's own logger redacts `*.secret` (a wildcard, so every key may be redacted).
    flatLineWriter(pino(loggerOptions('info'), stream), 'request')('info', { path: '/p/x', status: 200 });
    flatLineWriter(pino({ mixin: () => ({ mixed: 1 }) }, stream), 'request')('info', { status: 200 });
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      { path: '/p/x', status: 200, msg: 'request' },
      { status: 200, mixed: 1, msg: 'request' },
    ]);
  });
});
