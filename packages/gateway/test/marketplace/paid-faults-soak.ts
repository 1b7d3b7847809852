/**
 * Machinery of the paid-faults soak (paid-faults.soak.pg.test.ts): a seeded random
 * source, gateway child processes that can be SIGKILLed and restarted, the plan (what
 * each paid request's upstream does, what its client does, when gateways die), the
 * payer agent that retries a proof until it is settled, and the checks of the end state.
 * The plan comes from the seed, so a failing run is replayed with SOAK_SEED.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type ScriptedAnswer, scriptedBody } from '../support/test-upstream.ts';
import { withPayment } from '../support/x402.ts';

// ---------------------------------------------------------------------------
// Seeded randomness.

export const DEFAULT_SOAK_SEED = 20_250_610;

/** The seed of this run: SOAK_SEED (decimal or 0x hex) or the fixed default. */
export function soakSeed(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['SOAK_SEED'];
  if (raw === undefined || raw === '') return DEFAULT_SOAK_SEED;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new Error(`SOAK_SEED must be a non-negative integer, got ${raw}`);
  return n >>> 0;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  chance(p: number): boolean;
  pick<T>(xs: readonly T[]): T;
  weighted<T>(xs: readonly (readonly [T, number])[]): T;
  /** An independent stream derived from this one. */
  fork(): Rng;
}

/** mulberry32: small, fast, good enough to shuffle a test plan. */
export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const rng: Rng = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p) => next() < p,
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
    weighted(xs) {
      const total = xs.reduce((s, [, w]) => s + w, 0);
      let r = next() * total;
      for (const [x, w] of xs) {
        r -= w;
        if (r < 0) return x;
      }
      return xs[xs.length - 1]![0];
    },
    fork: () => seededRng(Math.floor(next() * 4_294_967_296)),
  };
  return rng;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------
// Gateway processes (src/main.ts as a child, as exactly-once.pg.test.ts runs it).

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface GatewayProcess {
  /** Slot name and incarnation, e.g. "B#2". */
  name: string;
  url: string;
  /** host:port, as the gateway forwards it in x-forwarded-host. */
  host: string;
  child: ChildProcess;
  startedAt: number;
  /** When the test sent SIGKILL; null while it lives. */
  killedAt: number | null;
  /** Paid attempts sent to it and not answered yet (the test's count). */
  inFlight: number;
  /** Log lines at level error or above. */
  errors: string[];
  /** SIGKILL, and wait for the process to be gone. */
  kill(): Promise<void>;
  /** SIGTERM (drain), then SIGKILL if it takes too long. */
  stop(): Promise<void>;
}

/** A port free right now (the gateway logs at warn, so it never says where it listens). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createNetServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startGatewayProcess(
  name: string,
  env: Record<string, string>,
): Promise<GatewayProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Never outlive the test process, whatever ends it.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      process.off('exit', orphanGuard);
      r();
    }),
  );
  const errors: string[] = [];
  let tail = '';
  let pending = '';
  const onData = (d: Buffer) => {
    // Keep what matters (errors, and the start of the output); the pipe must be drained either way.
    if (tail.length < 20_000) tail += d.toString();
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (/"level":(5\d|60)/.test(line)) errors.push(line);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const url = `http://127.0.0.1:${port}`;
  const giveUp = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`gateway ${name} exited before listening:\n${tail}`);
    }
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > giveUp) {
      child.kill('SIGKILL');
      throw new Error(`gateway ${name} did not start:\n${tail}`);
    }
    await sleep(50);
  }
  const g: GatewayProcess = {
    name,
    url,
    host: `127.0.0.1:${port}`,
    child,
    startedAt: Date.now(),
    killedAt: null,
    inFlight: 0,
    errors,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      g.killedAt = Date.now();
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    },
  };
  return g;
}

/** Two slots (A, B) whose processes can be killed and restarted; attempts go to a live one. */
export class GatewayPool {
  readonly all: GatewayProcess[] = [];
  private readonly live: (GatewayProcess | null)[];
  private readonly incarnations = new Map<string, number>();
  private readonly env: Record<string, string>;

  constructor(env: Record<string, string>, first: GatewayProcess[]) {
    this.env = env;
    this.live = [...first];
    this.all.push(...first);
    for (const g of first) this.incarnations.set(g.name.split('#')[0]!, 1);
  }

  static async start(env: Record<string, string>, slots = ['A', 'B']): Promise<GatewayPool> {
    const started = await Promise.allSettled(slots.map((s) => startGatewayProcess(`${s}#1`, env)));
    const gs = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) {
      await Promise.all(gs.map((g) => g.kill()));
      throw failed.reason;
    }
    return new GatewayPool(env, gs);
  }

  /** A live gateway, chosen by `rng`; waits while none is up. */
  async pick(rng: Rng): Promise<GatewayProcess> {
    for (;;) {
      const up = this.live.filter((g): g is GatewayProcess => g !== null);
      if (up.length > 0) return rng.pick(up);
      await sleep(50);
    }
  }

  first(): GatewayProcess {
    const g = this.live.find((x) => x !== null);
    if (!g) throw new Error('no gateway is up');
    return g;
  }

  /** SIGKILLs slot `i`'s process; returns it (with how many attempts it had in flight). */
  async kill(i: number): Promise<{ victim: GatewayProcess; inFlight: number } | null> {
    const victim = this.live[i];
    if (!victim) return null;
    this.live[i] = null;
    const inFlight = victim.inFlight;
    await victim.kill();
    return { victim, inFlight };
  }

  /** Starts a new process in slot `i` (same environment, same database schema). */
  async restart(i: number, slot: string): Promise<GatewayProcess> {
    const n = (this.incarnations.get(slot) ?? 0) + 1;
    this.incarnations.set(slot, n);
    const g = await startGatewayProcess(`${slot}#${n}`, this.env);
    this.all.push(g);
    this.live[i] = g;
    return g;
  }

  /** Which gateway incarnation made an upstream call (by the host it forwarded, at the time of the call). */
  incarnationOf(a: ScriptedAnswer): GatewayProcess | undefined {
    return this.all.find(
      (g) =>
        g.host === a.via && g.startedAt - 1_000 <= a.startedAt && (g.killedAt ?? Infinity) >= a.startedAt,
    );
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.all.map((g) => g.stop()));
  }
}

// ---------------------------------------------------------------------------
// The plan.

export type Behaviour = 'plain' | 'early_abort' | 'abort_before_answer' | 'abort_mid_body';
export type EndpointName = 'work' | 'jobs';

export interface EndpointSpec {
  name: EndpointName;
  method: 'GET' | 'POST';
  price: string;
  timeoutMs: number;
  /** Faults that fail an attempt (the payment stays with the request). */
  failing: readonly (readonly [string, number])[];
  /** Faults that deliver (the last fault of a request that gets delivered). */
  delivering: readonly (readonly [string, number])[];
}

/**
 * `work`: a quick GET (1 s deadline, under the 2 s lease). `jobs`: a POST with a body and
 * a 3 s deadline, past the lease, so slow answers need the lease renewed while they run.
 */
export const ENDPOINTS: Record<EndpointName, EndpointSpec> = {
  work: {
    name: 'work',
    method: 'GET',
    price: '0.01',
    timeoutMs: 1_000,
    failing: [
      ['status500', 3],
      ['status503', 2],
      ['status429', 2],
      ['status408', 1],
      ['hang', 2],
      ['reset', 3],
      ['stall', 2],
      ['cut', 2],
      ['slow20x100', 2], // a streamed body slower than the deadline
    ],
    delivering: [
      ['ok', 5],
      ['chunked', 2],
      ['slow5x100', 2],
      ['delay600', 1],
      ['status404', 1],
    ],
  },
  jobs: {
    name: 'jobs',
    method: 'POST',
    price: '0.02',
    timeoutMs: 3_000,
    failing: [
      ['status500', 2],
      ['status503', 1],
      ['status429', 1],
      ['reset', 2],
      ['cut', 1],
      ['stall', 1],
      ['hang', 1],
    ],
    delivering: [
      ['ok', 2],
      ['chunked', 1],
      ['delay2400', 3], // outlives the lease: it must be renewed
      ['slow10x250', 3],
    ],
  },
};

export interface PlannedPayment {
  n: number;
  chain: 'solana' | 'sui';
  endpoint: EndpointSpec;
  /** The upstream's answer per call; the last repeats. */
  faults: string[];
  /** True when the last fault fails: the payment can never be delivered. */
  persistent: boolean;
  /** How the client behaves on its first attempt. */
  first: Behaviour;
  /** When the first attempt is sent, ms after the chaos phase starts. */
  startAtMs: number;
  /** The path and query the payer asks for (unique per payment; its fault script is in it). */
  target: string;
  body: string | null;
  rng: Rng;
}

export interface PlannedKill {
  atMs: number;
  slot: number;
  downMs: number;
}

export interface SoakPlan {
  payments: PlannedPayment[];
  kills: PlannedKill[];
}

export function planSoak(
  rng: Rng,
  opts: { payments: number; spreadMs: number; kills: number; runId: string },
): SoakPlan {
  const payments: PlannedPayment[] = [];
  for (let n = 0; n < opts.payments; n++) {
    const endpoint = rng.chance(0.75) ? ENDPOINTS.work : ENDPOINTS.jobs;
    const shape = rng.weighted([
      ['clean', 35],
      ['transient', 50],
      ['persistent', 15],
    ] as const);
    const failures = shape === 'clean' ? 0 : shape === 'transient' ? rng.int(1, 3) : rng.int(1, 2);
    const faults = Array.from({ length: failures }, () => rng.weighted(endpoint.failing));
    if (shape !== 'persistent') faults.push(rng.weighted(endpoint.delivering));
    const first = rng.weighted([
      ['plain', 45],
      ['early_abort', 10],
      ['abort_before_answer', 25],
      ['abort_mid_body', 20],
    ] as const);
    const chain = rng.chance(0.5) ? 'solana' : 'sui';
    const target = `${endpoint.name}?run=${opts.runId}&n=${n}&fault=${faults.join(',')}`;
    payments.push({
      n,
      chain,
      endpoint,
      faults,
      persistent: shape === 'persistent',
      first,
      startAtMs: rng.int(0, opts.spreadMs),
      target,
      body: endpoint.method === 'POST' ? JSON.stringify({ job: n, run: opts.runId }) : null,
      rng: rng.fork(),
    });
  }
  // Kills spread over the spread window, one slot down at a time, alternating at random.
  const kills: PlannedKill[] = [];
  const slice = opts.spreadMs / opts.kills;
  for (let k = 0; k < opts.kills; k++) {
    kills.push({
      atMs: Math.floor(k * slice + rng.int(Math.floor(slice * 0.2), Math.floor(slice * 0.6))),
      slot: rng.int(0, 1),
      downMs: rng.int(200, 1_500),
    });
  }
  return { payments, kills };
}

// ---------------------------------------------------------------------------
// The payer agent: one paid request, retried with the same proof until it settles.

export type AttemptKind =
  /** A deliverable answer (live or replayed), read to its end. */
  | 'delivered'
  /** 502/504 retryable: the upstream failed this attempt. */
  | 'upstream_failed'
  /** 409 in progress or pending, 429 cooling, 503 retryable: wait and send again. */
  | 'busy'
  /**
   * A 2xx whose body broke off: a streamed answer whose upstream failed (or whose gateway
   * died) after the headers went out. Nothing can say "retryable" at that point.
   */
  | 'cut'
  /** The client gave up on purpose (abort, or cancelled mid-body). */
  | 'aborted'
  /** No answer: the connection failed (a killed gateway) or an error answer broke off. */
  | 'interrupted'
  /** Anything a paid proof must never get: 402, 500, a non-retryable error, a wrong body. */
  | 'violation';

export interface Attempt {
  gateway: string;
  behaviour: Behaviour;
  startedAt: number;
  endedAt: number;
  kind: AttemptKind;
  status: number | null;
  code?: string;
  replay: boolean;
  /** The call number of the upstream answer a delivered attempt carried. */
  call?: number;
  body?: string;
  retryAfterSec?: number;
  detail?: string;
}

export interface PaidRequest {
  plan: PlannedPayment;
  /** `/p/<slug>/<target>` on any gateway. */
  path: string;
  /** The proof header, paid before the chaos phase. */
  header: string;
  tx: string;
  payer: string;
  /** Total paid on-chain (atomic). */
  total: bigint;
}

export interface PaymentOutcome {
  paid: PaidRequest;
  attempts: Attempt[];
  /** The first full deliverable answer's body; every later one must be the same bytes. */
  deliveredBody: string | null;
  /** Attempts that failed upstream: retryable 502/504, or a 2xx cut mid-body. */
  upstreamFailures: number;
  /** Why the agent stopped early, when it is a failure of the test's expectations. */
  problems: string[];
}

const upstreamPath = (p: PlannedPayment) => `/${p.target}`;

const RETRYABLE_CODES: Record<number, readonly string[]> = {
  409: ['payment_in_progress', 'payment_pending'],
  429: ['rate_limited'],
  503: ['service_unavailable', 'verification_unavailable'],
};

/** What an answer means for a paid proof (see AttemptKind). */
export function classifyAnswer(
  p: PlannedPayment,
  status: number,
  headers: Headers,
  text: string,
): Pick<Attempt, 'kind' | 'code' | 'replay' | 'call' | 'body' | 'retryAfterSec' | 'detail'> {
  const replay = headers.get('x-tollgate-replay') === 'true';
  const retryAfter = headers.get('retry-after');
  const retryAfterSec = retryAfter === null ? undefined : Number(retryAfter);
  const scripted = /^scripted call=(\d+) fault=(\S+) url=(\S+)\n/.exec(text);
  if (scripted) {
    const call = Number(scripted[1]);
    const fault = scripted[2]!;
    const expected = scriptedBody(upstreamPath(p), call, fault);
    const deliverable = status < 500 && status !== 408 && status !== 429;
    if (scripted[3] !== upstreamPath(p) || text !== expected || !deliverable) {
      return { kind: 'violation', replay, detail: `wrong answer ${status}: ${text.slice(0, 200)}` };
    }
    if (fault !== p.faults[p.faults.length - 1] || p.persistent) {
      return { kind: 'violation', replay, detail: `delivered a failing fault's answer (${fault})` };
    }
    return { kind: 'delivered', replay, call, body: text };
  }
  let json: { error?: string; retryable?: boolean } = {};
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    return { kind: 'violation', replay, detail: `unparseable ${status}: ${text.slice(0, 200)}` };
  }
  const code = json.error;
  const base = { replay, code, ...(retryAfterSec !== undefined ? { retryAfterSec } : {}) };
  const retryable = json.retryable === true && retryAfterSec !== undefined && retryAfterSec >= 0;
  if ((status === 502 && code === 'upstream_error') || (status === 504 && code === 'upstream_timeout')) {
    return retryable
      ? { kind: 'upstream_failed', ...base }
      : { kind: 'violation', ...base, detail: `not retryable: ${text}` };
  }
  if (RETRYABLE_CODES[status]?.includes(code ?? '')) {
    return retryable
      ? { kind: 'busy', ...base }
      : { kind: 'violation', ...base, detail: `not retryable: ${text}` };
  }
  return { kind: 'violation', ...base, detail: `${status}: ${text.slice(0, 300)}` };
}

async function sendOnce(
  gw: GatewayProcess,
  paid: PaidRequest,
  behaviour: Behaviour,
  rng: Rng,
): Promise<Attempt> {
  const p = paid.plan;
  const startedAt = Date.now();
  const ctrl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  if (behaviour === 'early_abort') timer = setTimeout(() => ctrl.abort(), rng.int(0, 15));
  if (behaviour === 'abort_before_answer') {
    timer = setTimeout(() => ctrl.abort(), rng.int(30, p.endpoint.timeoutMs + 300));
  }
  const init: RequestInit = {
    method: p.endpoint.method,
    signal: ctrl.signal,
    ...(p.body !== null ? { body: p.body, headers: { 'content-type': 'application/json' } } : {}),
  };
  const done = (a: Omit<Attempt, 'gateway' | 'behaviour' | 'startedAt' | 'endedAt'>): Attempt => ({
    gateway: gw.name,
    behaviour,
    startedAt,
    endedAt: Date.now(),
    ...a,
  });
  let status: number | null = null;
  gw.inFlight += 1;
  try {
    const res = await fetch(`${gw.url}${paid.path}`, withPayment(init, paid.header));
    if (behaviour === 'abort_mid_body') {
      const reader = res.body!.getReader();
      await reader.read();
      await reader.cancel();
      return done({ kind: 'aborted', status: res.status, replay: false, detail: 'left mid-body' });
    }
    status = res.status;
    const text = await res.text();
    return done({ status: res.status, ...classifyAnswer(p, res.status, res.headers, text) });
  } catch (err) {
    if (ctrl.signal.aborted) return done({ kind: 'aborted', status, replay: false });
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return done({
      kind: status !== null && status >= 200 && status < 300 ? 'cut' : 'interrupted',
      status,
      replay: false,
      detail: `${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`,
    });
  } finally {
    clearTimeout(timer);
    gw.inFlight -= 1;
  }
}

/**
 * Sends the proof until its request is delivered, or (a persistent fault) until it has
 * failed upstream `persistentFailures` times, honouring Retry-After. Now and then a twin
 * sends the same proof at the same time to a gateway of its own (an impatient payer on
 * two devices), so claims and leases race across processes. Stops at the first
 * violation, or when `settleWithinMs` passes without settling.
 */
export async function runPayer(
  pool: GatewayPool,
  paid: PaidRequest,
  opts: { chaosStart: number; persistentFailures: number; settleWithinMs: number; twinChance: number },
): Promise<PaymentOutcome> {
  const p = paid.plan;
  const rng = p.rng;
  const out: PaymentOutcome = { paid, attempts: [], deliveredBody: null, upstreamFailures: 0, problems: [] };
  await sleep(Math.max(0, opts.chaosStart + p.startAtMs - Date.now()));
  const deadline = Date.now() + opts.settleWithinMs;
  for (let i = 0; ; i++) {
    const behaviour: Behaviour =
      i === 0
        ? p.first
        : rng.chance(0.12)
          ? rng.pick(['early_abort', 'abort_before_answer', 'abort_mid_body'] as const)
          : 'plain';
    const twinAfterMs = rng.chance(opts.twinChance) ? rng.int(0, p.endpoint.timeoutMs + 500) : null;
    const gw = await pool.pick(rng);
    const [a, twin] = await Promise.all([
      sendOnce(gw, paid, behaviour, rng),
      twinAfterMs === null
        ? null
        : sleep(twinAfterMs).then(async () => sendOnce(await pool.pick(rng), paid, 'plain', rng)),
    ]);
    const sent = twin ? [a, twin] : [a];
    out.attempts.push(...sent);
    for (const x of sent) {
      if (x.kind === 'violation')
        out.problems.push(`attempt ${i + 1} via ${x.gateway}: ${x.detail ?? x.code}`);
      if (x.kind === 'delivered') {
        if (out.deliveredBody !== null && out.deliveredBody !== x.body) {
          out.problems.push(`attempt ${i + 1}: the twins got different answers`);
        }
        out.deliveredBody ??= x.body ?? null;
      }
    }
    if (out.problems.length > 0 || out.deliveredBody !== null) return out;
    if (a.kind === 'upstream_failed' || a.kind === 'cut') {
      out.upstreamFailures += 1;
      if (p.persistent && out.upstreamFailures >= opts.persistentFailures) return out;
    }
    if (Date.now() > deadline) {
      out.problems.push(`not settled after ${opts.settleWithinMs} ms and ${i + 1} attempts`);
      return out;
    }
    const retryAfterSec = Math.max(a.retryAfterSec ?? -1, twin?.retryAfterSec ?? -1);
    const wait =
      retryAfterSec >= 0
        ? retryAfterSec * 1000 + rng.int(0, 150)
        : a.kind === 'aborted' || a.kind === 'interrupted' || a.kind === 'cut'
          ? rng.int(50, 400)
          : 250;
    await sleep(wait);
  }
}

/** One more send of a settled proof, with a plain client: what the payer gets now. */
export function probeSettled(pool: GatewayPool, paid: PaidRequest, rng: Rng): Promise<Attempt> {
  return pool.pick(rng).then((gw) => sendOnce(gw, paid, 'plain', rng));
}

// ---------------------------------------------------------------------------
// The end-state checks.

export const isDeliverableStatus = (s: number) => s >= 200 && s < 500 && s !== 408 && s !== 429;

/**
 * A successful run that was not stored may be run again only because the gateway that
 * made it died before storing it: it was SIGKILLed while the run was still going (the
 * upstream can finish writing into the socket of a gateway just killed: 206 ms after the
 * kill in one CI run) or after it ended (within this long: a loaded machine can delay
 * storing by seconds, never by this much), and it logged nothing about the payment (a live
 * gateway that failed to store, or was fenced off by a takeover, says so).
 */
export const CRASH_EXCUSE_MS = 10_000;

export interface ExecutionReport {
  /** Successful upstream executions (deliverable status, answer written in full). */
  successes: ScriptedAnswer[];
  /** Of those, the ones a kill of the gateway that made them explains being run again. */
  crashed: ScriptedAnswer[];
}

export function executionsOf(
  pool: GatewayPool,
  answers: readonly ScriptedAnswer[],
  paid: Pick<PaidRequest, 'plan' | 'tx'>,
): ExecutionReport {
  const mine = answers.filter((a) => a.url === upstreamPath(paid.plan));
  const successes = mine.filter((a) => a.complete && isDeliverableStatus(a.status));
  const crashed = successes.filter((a) => {
    const g = pool.incarnationOf(a);
    if (!g || g.killedAt === null) return false;
    const sinceEnd = g.killedAt - a.endedAt;
    return (
      g.killedAt >= a.startedAt && sinceEnd <= CRASH_EXCUSE_MS && !g.errors.some((e) => e.includes(paid.tx))
    );
  });
  return { successes, crashed };
}

/**
 * Upstream calls of one request that started less than `minGapMs` after the previous one
 * ended: after a failed attempt the proof must wait out its retry window (DESIGN §4.5),
 * and after a crash its lease; only a gateway's own error (abandon) frees it at once.
 */
export function retryWindowBreaches(
  answers: readonly ScriptedAnswer[],
  p: PlannedPayment,
  minGapMs: number,
): string[] {
  const mine = answers.filter((a) => a.url === upstreamPath(p)).sort((x, y) => x.startedAt - y.startedAt);
  const out: string[] = [];
  for (let i = 1; i < mine.length; i++) {
    const prev = mine[i - 1]!;
    const next = mine[i]!;
    if (prev.endedAt === 0 || next.startedAt < prev.endedAt) {
      out.push(`call ${next.call} started while call ${prev.call} was still open`);
      continue;
    }
    const gap = next.startedAt - prev.endedAt;
    if (gap < minGapMs) out.push(`call ${next.call} started ${gap} ms after call ${prev.call} ended`);
  }
  return out;
}

export { upstreamPath };
