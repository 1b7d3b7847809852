/**
 * Where a 402's CPU goes (issue 14; `npm run bench:anatomy`). The bench's ratios say how
 * the gateway's 402 compares with a bare node:http server; this says why, by running the
 * real gateway (createGateway, the bench's project) in this process, pinned to one CPU,
 * and measuring it three ways:
 *
 * 1. **The gateway's JavaScript alone**: its request listener called with a stub request
 *    and response (no socket), the fast path issuing a real 402 each time (nonce, request
 *    hash, signed token, JSON, access line, metrics). CPU µs per 402.
 * 2. **The gateway over HTTP**: wrk on the other CPU, 32 connections. CPU of this process
 *    per request (all threads), the time spent in the request listener, and within it in
 *    `res.end` (the answer's write to the socket: the syscall, and the kernel's loopback
 *    delivery to wrk). The access line and the metrics are written on the response's
 *    `finish`, a tick after the listener: over HTTP they count under "elsewhere", while the
 *    stub of 1 runs them inside its call.
 * 3. **The same bytes, constant**: the same process, server and connections, answering a
 *    402 captured from the gateway (its headers and body) from a listener put in front.
 *    That is the bare server's work in the gateway's process.
 *
 * 4. **The same bytes after a busy wait** as long as the gateway's JavaScript takes over HTTP
 *    (its listener's time beyond the write, less the constant answer's): a server doing the
 *    bare work plus the gateway's amount of CPU of its own, with no allocation, no I/O and
 *    nothing else of the gateway's.
 * 5. **The same bytes from a plain node:http server** in this process (none of Fastify's
 *    server options), and 6. **from the bench's bare 402 server** in its own process on the
 *    same CPU: what the gateway's process and server add to Node's own work.
 *
 * The rounds over HTTP (2–6, alternating) run before 1: after the stub loop Node's HTTP code
 * costs about 1.3× more in this process whatever server answers (docs/performance.md,
 * sixteenth session). What 2 costs over 3 is the gateway's own work plus what it
 * does to the rest: at a lower request rate each request pays more of the kernel's work
 * (wrk is woken more often, fewer answers share a wake-up), which shows as a dearer
 * `res.end` and a dearer "elsewhere" (parsing, reading, the event loop).
 *
 * Needs taskset and wrk; loopback only. Options: --rounds N (default 5), --seconds S (3),
 * --log-level L (info: every 402 writes its access line, as in production), --alone (only 1,
 * with the heap a stub 402 allocates and the bytes it leaves in the old generation, which
 * bring mark-compacts: a quick check of a change to the 402's code), --sites
 * (where that heap goes, by allocating function), --forward-sites (the same for the free
 * endpoint forwarded over HTTP, with an upstream on the other CPU: the gateway's forward and
 * Node's HTTP on both sides), --forward-old (what those forwards leave in the old generation),
 * --instructions (instead of all that, the instructions a stub 402 executes, counted by
 * callgrind: see instructionsAlone).
 * Started by anatomy.mjs (pinned, with the gateway's launch flags, stdout and its access
 * lines to /dev/null); the report goes to stderr.
 */

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createServer, ServerResponse } from 'node:http';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { newSolanaKey } from '@tollgate/client';
import { createGateway } from '../packages/gateway/src/app.ts';
import { loadConfig, withConfig } from '../packages/gateway/src/config.ts';
import { fastUnpaidAnswered } from '../packages/gateway/src/http/server.ts';
import { createCatalog } from '../packages/gateway/src/marketplace/catalog.ts';
import { tuneV8 } from '../packages/gateway/src/startup/v8-tuning.ts';
import { node, server, spawnBare402, stableHeaders } from './lib/base-servers.ts';
import { spawnPinned, stopAll, stopChildrenOnExit } from './lib/children.ts';
import { cpuSeconds } from './lib/proc.ts';
import { benchGatewayEnv } from './lib/stack.ts';
import { median } from './lib/stats.ts';
import { ensureTools } from './lib/tools.ts';
import { runWrk, type WrkResult, writeWrkScript } from './lib/wrk.ts';
import { BENCH_SLUG, seedBenchProject } from './servers/seed.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    'log-level': { type: 'string' },
    alone: { type: 'boolean' },
    sites: { type: 'boolean' },
    'forward-sites': { type: 'boolean' },
    'forward-old': { type: 'boolean' },
    instructions: { type: 'boolean' },
  },
});
const ROUNDS = Math.max(1, Number(values.rounds ?? 5));
const SECONDS = Math.max(2, Number(values.seconds ?? 3));
const SELF_CPU = '0';
const OTHER_CPU = '1';

ensureTools(['taskset', 'wrk']);
const say = (line: string) => process.stderr.write(`${line}\n`);

tuneV8();
const dir = mkdtempSync(join(tmpdir(), 'tollgate-anatomy-'));
// However this ends (an error before the measurements, an uncaught one, a signal): the
// chains and any wrk are killed by pid and the temp dir goes.
const stopping = stopChildrenOnExit('bench:anatomy', () => rmSync(dir, { recursive: true, force: true }));
const chains = await spawnPinned({
  name: 'chains',
  cpu: OTHER_CPU,
  command: node,
  args: [server('chains.ts')],
});
const provider = newSolanaKey().address;
const config = withConfig(
  loadConfig(
    benchGatewayEnv({
      secret: randomBytes(32).toString('hex'),
      dir,
      databaseUrl: `sqlite:${join(dir, 'tollgate.sqlite')}`,
      solanaRpcUrl: String(chains.info['solanaUrl']),
      suiRpcUrl: String(chains.info['suiUrl']),
      // The access line of every 402 is written, as in production (to stdout: /dev/null);
      // --log-level warn measures the 402 without it.
      logLevel: values['log-level'] ?? 'info',
    }),
    [],
  ),
  { port: 0 },
);
const gateway = await createGateway(config);
// The 402 never reaches the upstream: an upstream runs (on the other CPU) only for --forward-sites.
const upstream =
  values['forward-sites'] || values['forward-old']
    ? await spawnPinned({ name: 'upstream', cpu: OTHER_CPU, command: node, args: [server('upstream.ts')] })
    : null;
await seedBenchProject(gateway.deps.store, gateway.deps.catalog, config, {
  upstreamUrl: upstream ? `http://127.0.0.1:${upstream.info['port']}` : 'http://127.0.0.1:9',
  providerSolana: provider,
});
await gateway.deps.catalog.get(BENCH_SLUG);
await gateway.app.listen({ port: 0, host: '127.0.0.1' });
const httpServer = gateway.app.server;
const port = (httpServer.address() as { port: number }).port;
const url = `http://127.0.0.1:${port}/p/${BENCH_SLUG}/paid`;
const listeners = httpServer.listeners('request');
if (listeners.length !== 1) throw new Error(`expected one request listener, found ${listeners.length}`);
const gatewayListener = listeners[0] as (req: IncomingMessage, res: ServerResponse) => void;

// 1. The JavaScript alone: the listener with a stub request and response.
const stub402 = (() => {
  const socket = { remoteAddress: '127.0.0.1' };
  const headers = { host: `127.0.0.1:${port}`, 'user-agent': 'anatomy', accept: '*/*' };
  const listeners: Record<string, (() => void)[]> = {};
  const res = {
    statusCode: 200,
    headersSent: false,
    writableEnded: false,
    // All handed to the kernel at once, as a real socket with room takes a 402.
    writableLength: 0,
    destroyed: false,
    writeHead(status: number) {
      this.statusCode = status;
      this.headersSent = true;
      return this;
    },
    end() {
      this.writableEnded = true;
      for (const f of listeners['finish'] ?? []) f();
    },
    on(event: string, f: () => void) {
      const list = listeners[event] ?? [];
      list.push(f);
      listeners[event] = list;
      return this;
    },
    once(event: string, f: () => void) {
      return this.on(event, f);
    },
    removeListener(event: string, f: () => void) {
      listeners[event] = (listeners[event] ?? []).filter((g) => g !== f);
      return this;
    },
  };
  return () => {
    res.statusCode = 200;
    res.headersSent = false;
    res.writableEnded = false;
    for (const k in listeners) delete listeners[k];
    gatewayListener({ url: `/p/${BENCH_SLUG}/paid`, method: 'GET', headers, socket } as never, res as never);
    if (res.statusCode !== 402) throw new Error(`the stub request got ${res.statusCode}, not a 402`);
  };
})();

/** CPU µs per stub 402. */
async function jsAlone(n: number): Promise<number> {
  const before = fastUnpaidAnswered(gateway.app);
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    // The loop yields now and then, so the catalogue's snapshot is refreshed in the background as under load.
    if (i % 2000 === 1999) await new Promise((r) => setImmediate(r));
    stub402();
  }
  const c = process.cpuUsage(c0);
  if (fastUnpaidAnswered(gateway.app) - before !== n)
    throw new Error('the fast path did not answer every stub request');
  return (c.user + c.system) / n;
}

/**
 * Bytes of V8 heap a stub 402 allocates: the heap's growth over batches of 100, the median
 * of those a garbage collection did not interrupt (one that did shrinks the heap instead).
 * What the write to a socket allocates is not in it (the stub has none).
 */
async function allocationAlone(batches: number): Promise<number> {
  const per: number[] = [];
  for (let b = 0; b < batches; b++) {
    if (b % 20 === 19) await new Promise((r) => setImmediate(r));
    const h0 = getHeapStatistics().used_heap_size;
    for (let i = 0; i < 100; i++) stub402();
    const grown = getHeapStatistics().used_heap_size - h0;
    if (grown > 0) per.push(grown / 100);
  }
  return median(per);
}

/** Bytes used in old space, and in V8's other old spaces (code, trusted, large objects). */
function oldGenerationUsed(): { old: number; other: number } {
  let old = 0;
  let other = 0;
  for (const s of getHeapSpaceStatistics()) {
    if (s.space_name === 'old_space') old += s.space_used_size;
    else if (s.space_name !== 'new_space' && s.space_name !== 'new_large_object_space')
      other += s.space_used_size;
  }
  return { old, other };
}

/**
 * Bytes the old generation keeps per stub 402: its growth over `n` of them, scavenging every
 * 2000 so that nothing young is counted (what a scavenge promotes is). A 402 that leaves
 * nothing there never brings a mark-compact. Null without --expose-gc (anatomy.mjs gives it).
 */
async function oldGrowthAlone(n: number): Promise<{ old: number; other: number } | null> {
  const gc = (globalThis as { gc?: (o?: { type: 'minor' | 'major' }) => void }).gc;
  if (!gc) return null;
  gc();
  gc({ type: 'minor' });
  const before = oldGenerationUsed();
  for (let i = 0; i < n; i++) {
    if (i % 2000 === 1999) {
      await new Promise((r) => setImmediate(r));
      gc({ type: 'minor' });
    }
    stub402();
  }
  gc({ type: 'minor' });
  const after = oldGenerationUsed();
  return { old: (after.old - before.old) / n, other: (after.other - before.other) / n };
}

// Timing of the listener and of res.end, kept only while a round runs.
let inListener = 0n;
let inEnd = 0n;
let calls = 0;
const realEnd = ServerResponse.prototype.end;
function timedEnd(this: ServerResponse, ...args: unknown[]) {
  const t = process.hrtime.bigint();
  const r = (realEnd as (...a: unknown[]) => ServerResponse).apply(this, args);
  inEnd += process.hrtime.bigint() - t;
  return r;
}

// 3. The same bytes, constant: one real 402 captured over HTTP, as the bench's bare 402 server replays it.
const sample = await fetch(url);
const constBody = Buffer.from(await sample.arrayBuffer()).toString();
if (sample.status !== 402) throw new Error(`the gateway answered ${sample.status}, not a 402`);
const constHeaders = stableHeaders(sample);
/** As the gateway writes it (fast-unpaid.ts): an ASCII text as Latin-1. */
const constEncoding = Buffer.byteLength(constBody) === constBody.length ? 'latin1' : 'utf8';

/** 2–4, answered by the gateway's server; 5 and 6 by servers of their own (overHttp starts them). */
type Mode = 'gateway' | 'constant' | 'spin' | 'plain' | 'bare';
/** The spin mode's busy wait before the constant answer, ns (the gateway's JavaScript over HTTP). */
let spinNs = 0n;
let mode: Mode = 'gateway';
/** The captured 402, as the constant, spin and plain modes send it. */
function answerConstant(res: ServerResponse): void {
  res.writeHead(402, constHeaders);
  res.end(constBody, constEncoding);
}
httpServer.removeAllListeners('request');
httpServer.on('request', (req: IncomingMessage, res: ServerResponse) => {
  const t = process.hrtime.bigint();
  if (mode !== 'gateway') {
    if (mode === 'spin') {
      const until = t + spinNs;
      while (process.hrtime.bigint() < until);
    }
    answerConstant(res);
  } else gatewayListener(req, res);
  inListener += process.hrtime.bigint() - t;
  calls++;
});

interface Round {
  rps: number;
  cpu: number;
  listener: number;
  end: number;
}
const script = writeWrkScript(dir);
/** One wrk run as the bench makes it (bench/lib/wrk.ts); every answer must be the 402. */
async function wrk(seconds: number, target = url): Promise<WrkResult> {
  const w = await runWrk({
    url: target,
    seconds,
    connections: 32,
    cpu: OTHER_CPU,
    script,
    windowMs: seconds * 1000 - 500,
  });
  const { connect, read, write, timeout, status } = w.errors;
  if (connect + read + write + timeout > 0 || status !== w.requests || w.requests === 0)
    throw new Error(`wrk: ${w.requests} answers, ${status} of them 402, errors ${JSON.stringify(w.errors)}`);
  return w;
}

/** A server answering the same bytes outside the gateway's (5, 6): its URL and its CPU so far, µs. */
interface Elsewhere {
  url: string;
  cpuMicros(): number;
}
/** Set by overHttp while its rounds run. */
const elsewhere: Partial<Record<Mode, Elsewhere>> = {};
async function round(m: Mode, seconds: number): Promise<Round> {
  const other = elsewhere[m];
  if (other !== undefined) {
    const c0 = other.cpuMicros();
    const w = await wrk(seconds, other.url);
    return { rps: w.rps, cpu: (other.cpuMicros() - c0) / w.requests, listener: Number.NaN, end: Number.NaN };
  }
  mode = m;
  inListener = 0n;
  inEnd = 0n;
  calls = 0;
  ServerResponse.prototype.end = timedEnd as typeof realEnd;
  const c0 = process.cpuUsage();
  const w = await wrk(seconds);
  const c = process.cpuUsage(c0);
  ServerResponse.prototype.end = realEnd;
  return {
    rps: w.rps,
    cpu: (c.user + c.system) / w.requests,
    listener: Number(inListener) / 1000 / calls,
    end: Number(inEnd) / 1000 / calls,
  };
}

/**
 * Where the heap goes while `work` runs: V8's sampling heap profiler, counting the objects
 * already collected too; the allocating functions with the largest share, per unit of work.
 */
async function allocationSites(what: string, work: () => Promise<number>): Promise<void> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const n = await work();
  const { profile } = (await post('HeapProfiler.stopSampling')) as { profile: { head: HeapNode } };
  session.disconnect();
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode) => {
    const self = node.selfSize;
    if (self > 0) {
      const f = node.callFrame;
      const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
      bySite.set(key, (bySite.get(key) ?? 0) + self);
      total += self;
    }
    for (const c of node.children) walk(c);
  };
  walk(profile.head);
  say(
    `heap allocated by ${n} ${what}, by allocating function (sampled every 256 B): ${(total / n / 1024).toFixed(1)} KB each`,
  );
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 20))
    say(
      `  ${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${(bytes / n).toFixed(0).padStart(6)} B  ${site}`,
    );
}

/** 50,000 stub 402s. */
async function stub402s(): Promise<number> {
  const n = 50_000;
  for (let i = 0; i < n; i++) {
    if (i % 2000 === 1999) await new Promise((r) => setImmediate(r));
    stub402();
  }
  return n;
}

/** The free endpoint forwarded over HTTP for 4 s (wrk on the other CPU): the gateway's forward and Node's HTTP. */
async function forwards(): Promise<number> {
  const w = await runWrk({
    url: `http://127.0.0.1:${port}/p/${BENCH_SLUG}/free`,
    seconds: 4,
    connections: 32,
    cpu: OTHER_CPU,
    script,
    windowMs: 3500,
  });
  if (w.errors.status > 0 || w.requests === 0)
    throw new Error(`the forward answered ${w.errors.status} errors`);
  return w.requests;
}
/**
 * Bytes the old generation keeps per forwarded request while wrk forwards the free endpoint
 * for 4 s: the old space's growth between scavenges made every 100 ms (a request lasts a few
 * ms, so one in flight is not promoted by them), over the requests. Needs --expose-gc.
 */
async function forwardOldGrowth(): Promise<number | null> {
  const gc = (globalThis as { gc?: (o?: { type: 'minor' | 'major' }) => void }).gc;
  if (!gc) return null;
  const oldUsed = () => oldGenerationUsed().old;
  gc();
  gc({ type: 'minor' });
  let last = oldUsed();
  let grown = 0;
  const tick = setInterval(() => {
    gc({ type: 'minor' });
    const now = oldUsed();
    // A mark-compact in between shrinks it: that interval counts nothing.
    if (now > last) grown += now - last;
    last = now;
  }, 100);
  try {
    const n = await forwards();
    return grown / n;
  } finally {
    clearInterval(tick);
  }
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/**
 * 2–6: the rounds over HTTP, and the report. They run before any stub 402 (1): after the
 * stub loop, Node's own HTTP code costs about 1.3× more in this process, whatever server
 * answers (the plain server's rounds showed it: 69 against the bare server's 52 µs after
 * the loop, 44 against 46 without it), because the stubs are not the objects that code
 * was optimized for. So the busy wait is the gateway's JavaScript as measured here over
 * HTTP: what its listener takes beyond the write, less what the constant answer's takes.
 */
async function overHttp(): Promise<void> {
  // 5. A plain node:http server in this process (none of Fastify's server or options), the same answer.
  const plain = createServer((_req, res) => answerConstant(res));
  plain.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  elsewhere.plain = {
    url: `http://127.0.0.1:${(plain.address() as { port: number }).port}/p/${BENCH_SLUG}/paid`,
    cpuMicros: () => {
      const c = process.cpuUsage();
      return c.user + c.system;
    },
  };
  // 6. The bench's bare 402 server, in its own process on this CPU (stopped with the other children).
  const bare = await spawnBare402({
    cpu: SELF_CPU,
    dir,
    body: Buffer.from(constBody),
    headers: constHeaders,
  });
  elsewhere.bare = {
    url: `http://127.0.0.1:${bare.info['port']}/p/${BENCH_SLUG}/paid`,
    cpuMicros: () => cpuSeconds(bare.pid) * 1e6,
  };
  try {
    await roundsOverHttp();
  } finally {
    plain.closeAllConnections();
    plain.close();
  }
}

async function roundsOverHttp(): Promise<void> {
  const own = (x: Round) => x.listener - x.end;
  await round('gateway', 2); // the first round runs code not yet optimized
  const warmGateway = await round('gateway', 2);
  const warmConstant = await round('constant', 2);
  spinNs = BigInt(Math.round(Math.max(0, own(warmGateway) - own(warmConstant)) * 1000));
  await round('spin', 2);
  await round('bare', 2);
  await round('plain', 2);
  const runs: Record<Mode, Round[]> = { gateway: [], constant: [], spin: [], bare: [], plain: [] };
  const order: Mode[] = ['gateway', 'constant', 'spin', 'bare', 'plain'];
  for (let r = 0; r < ROUNDS; r++) {
    for (const m of r % 2 ? [...order].reverse() : order) {
      const x = await round(m, SECONDS);
      runs[m].push(x);
      // The busy wait follows the gateway's latest rounds (the warm-up's ran code still being optimized).
      if ((m === 'gateway' || m === 'constant') && runs.gateway.length > 0 && runs.constant.length > 0)
        spinNs = BigInt(
          Math.round(Math.max(0, own(runs.gateway.at(-1)!) - own(runs.constant.at(-1)!)) * 1000),
        );
      const timing = Number.isFinite(x.listener)
        ? `, listener ${x.listener.toFixed(1)} µs, res.end ${x.end.toFixed(1)} µs`
        : '';
      say(`  round ${r + 1} ${m}: ${Math.round(x.rps)} req/s, ${x.cpu.toFixed(1)} µs CPU/req${timing}`);
    }
  }
  const med = (m: Mode, k: keyof Round) => median(runs[m].map((x) => x[k]));
  const cell = (v: number, width: number) => (Number.isFinite(v) ? v.toFixed(1) : '–').padStart(width);
  const row = (m: Mode, label: string) => {
    const cpu = med(m, 'cpu');
    const listener = med(m, 'listener');
    const end = med(m, 'end');
    return `${label.padEnd(34)}${String(Math.round(med(m, 'rps'))).padStart(8)}${cell(cpu, 10)}${cell(end, 12)}${cell(listener - end, 18)}${cell(cpu - listener, 12)}`;
  };
  const g = med('gateway', 'cpu');
  const k = med('constant', 'cpu');
  const js = median(runs.gateway.map(own)) - median(runs.constant.map(own));
  const sp = med('spin', 'cpu');
  const b = med('bare', 'cpu');
  const pl = med('plain', 'cpu');
  say(
    `\n402 anatomy: medians of ${ROUNDS} rounds of ${SECONDS} s, wrk -t1 -c32; this process on CPU ${SELF_CPU}, wrk and the chains on CPU ${OTHER_CPU}; µs of CPU per request`,
  );
  say(
    `${''.padEnd(34)}${'req/s'.padStart(8)}${'CPU/req'.padStart(10)}${'res.end'.padStart(12)}${'rest of listener'.padStart(18)}${'elsewhere'.padStart(12)}`,
  );
  say(row('gateway', 'gateway 402'));
  say(row('constant', 'same bytes, constant'));
  say(row('spin', `same, after ~${js.toFixed(1)} µs of busy wait`));
  say(row('plain', 'same bytes, plain server here'));
  say(row('bare', 'same bytes, bare server'));
  say(
    `\nThe gateway costs ${(g - k).toFixed(1)} µs more per 402 than the same bytes sent from the same process` +
      ` (${(g / k).toFixed(2)}×): its JavaScript ${js.toFixed(1)} µs (its listener's own time over HTTP, beyond the` +
      ` constant answer's), and ${(g - k - js).toFixed(1)} µs of the same work costing more at its lower rate` +
      ` (res.end ${(med('gateway', 'end') - med('constant', 'end')).toFixed(1)} µs of it).` +
      ` At 0.6× the constant answer's CPU the gateway would have to cost ${(k / 0.6).toFixed(1)} µs in all.`,
  );
  say(
    `The constant answer after a busy wait that long costs ${sp.toFixed(1)} µs per request` +
      ` (${(sp / k).toFixed(2)}× the constant answer; the gateway ${(g / k).toFixed(2)}×): that much of the gateway's` +
      ` cost follows from the time its own code takes, whatever that code does.`,
  );
  say(
    `The bench's bare 402 server, in its own process, sends the same bytes at ${b.toFixed(1)} µs per request, a plain` +
      ` node:http server in this process at ${pl.toFixed(1)} (${(pl / b).toFixed(2)}×), the gateway's server at` +
      ` ${k.toFixed(1)} (${(k / b).toFixed(2)}×, with this tool's timing of the listener and res.end);` +
      ` the gateway is ${(b / g).toFixed(2)}× the bare server's throughput by CPU.`,
  );
}

/**
 * --instructions: the instructions a stub 402 executes (user space: the gateway's JavaScript,
 * V8's and Node's native code it calls, and the garbage collection of what it allocates),
 * counted by callgrind, which anatomy.mjs starts this process under with its instrumentation
 * off. After the warm-up it is turned on, and each round zeroes the counters, runs the stub 402s
 * and dumps them. A count, not a time: on a host whose speed drifts it still tells whether a
 * change to the 402's code does less (rounds agree within about 1 %; times rounds apart by
 * 10–20 % there). Valgrind hides the CPU's SHA extensions, so OpenSSL hashes with AVX2 under it:
 * the 402's three SHA-256 calls take some 30,000 of the count (39,000 before r2 tokens), several
 * times what they take natively. Over HTTP the counts were not steady (docs/performance.md, seventeenth session).
 */
async function instructionsAlone(): Promise<void> {
  const out = process.env['ANATOMY_CALLGRIND_DIR'];
  if (!out)
    throw new Error('--instructions needs callgrind: run it as npm run bench:anatomy -- --instructions');
  const control = (flag: string) =>
    new Promise<void>((resolve, reject) =>
      execFile('callgrind_control', [flag, String(process.pid)], (err) => (err ? reject(err) : resolve())),
    );
  const read = new Set<string>();
  /** The total of the dump callgrind_control -d just wrote. */
  const dumped = (): number => {
    // callgrind.out.<k>: the k-th dump (callgrind.out itself is the one written at exit).
    const fresh = readdirSync(out).filter((f) => /\.\d+$/.test(f) && !read.has(f));
    if (fresh.length !== 1)
      throw new Error(`expected one new callgrind dump in ${out}, found ${fresh.length}`);
    read.add(fresh[0]!);
    const text = readFileSync(join(out, fresh[0]!), 'utf8');
    const m = /^(?:summary|totals): (\d+)/m.exec(text);
    if (!m) throw new Error(`no total in callgrind's dump ${fresh[0]}`);
    return Number(m[1]);
  };
  // Slowed down some 50× under callgrind, the process would reload the catalogue's snapshot
  // (a 1 s TTL) every few hundred 402s instead of every few tens of thousands, and count it:
  // the stubs here read one that stays fresh.
  gateway.deps.catalog = createCatalog(gateway.deps.store, 3_600_000);
  const n = 5000;
  await gateway.deps.catalog.get(BENCH_SLUG);
  await jsAlone(20_000); // warm-up, not instrumented
  await control('--instr=on');
  await jsAlone(n); // the code instrumented once
  const perRound: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    await control('--zero');
    await jsAlone(n);
    await control('--dump');
    perRound.push(dumped() / n);
  }
  await control('--instr=off');
  say(
    `instructions per stub 402 (callgrind, user space; median of ${ROUNDS} rounds of ${n}): ${Math.round(median(perRound))} (${perRound.map((x) => Math.round(x)).join(', ')})`,
  );
}

/** 1: the gateway's JavaScript with stub requests (CPU, heap, old generation, sites). */
async function stubbed(): Promise<void> {
  // The rounds over HTTP took long enough for the catalogue's snapshot to need a reload.
  await gateway.deps.catalog.get(BENCH_SLUG);
  await jsAlone(20_000); // warm-up
  const alone: number[] = [];
  for (let r = 0; r < ROUNDS; r++) alone.push(await jsAlone(50_000));
  const js = median(alone);
  const bytes = await allocationAlone(500);
  say(
    `gateway JavaScript alone (stub request and response): ${js.toFixed(1)} µs CPU and ${(bytes / 1024).toFixed(1)} KB of heap allocated per 402 (CPU: ${alone.map((x) => x.toFixed(1)).join(', ')})`,
  );
  const kept = await oldGrowthAlone(100_000);
  if (kept)
    say(
      `old generation kept per stub 402 (scavenged every 2000): ${kept.old.toFixed(1)} B in old space, ${kept.other.toFixed(1)} B in V8's other old spaces (code, trusted, large objects)`,
    );
  if (values.sites) await allocationSites('stub 402s', stub402s);
}

try {
  // Over HTTP first: the stub loop would make Node's HTTP code dearer for the rest of the process (overHttp).
  if (values.instructions) await instructionsAlone();
  else {
    if (!values.alone) await overHttp();
    await stubbed();
  }
  if (values['forward-old']) {
    await forwards(); // warm-up
    const kept = await forwardOldGrowth();
    if (kept !== null)
      say(`old generation kept per forwarded request (scavenged every 100 ms): ${kept.toFixed(1)} B`);
  }
  if (values['forward-sites']) {
    await forwards(); // warm-up
    await allocationSites('forwarded requests (the free endpoint, over HTTP)', forwards);
  }
} catch (e) {
  // A stop by signal ends the wrk run under way: that failure is not news.
  if (!stopping()) {
    say(`bench:anatomy failed: ${(e as Error).stack ?? e}`);
    process.exitCode = 1;
  }
} finally {
  await gateway.close();
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
