/** Bench settings from the command line (`npm run bench -- --quick --rounds 5`). */
import { parseArgs } from 'node:util';

export interface BenchOptions {
  rounds: number;
  roundS: number;
  warmupS: number;
  drainMs: number;
  soakS: number;
  connections: number;
  payments: number;
  paymentBudgetS: number;
  profile: boolean;
  /** Afterwards, the gateway and each scenario's leanest baseline sampled with Linux perf (native-profile.ts). */
  perf: boolean;
  /** With --perf: which two configurations to compare instead (config keys), in the scenarios that have both. */
  perfPair: { subject: string; baseline: string } | null;
  logLevel: string;
  serverCpu: string;
  upstreamCpu: string;
  chainCpu: string;
  loadCpu: string;
  databaseUrl: string | null;
  /** Run the gateway on a private PostgreSQL cluster started for the bench. */
  postgres: boolean;
  /** Gateway TOLLGATE_HEALTH_INTERVAL_MS; null keeps the production default. */
  healthIntervalMs: number | null;
  keep: boolean;
  /** Also run the gateway beside each baseline at the same time (paired.ts). */
  paired: boolean;
  /** Scenario keys to run (402, free, big, paid); all when empty. */
  only: string[];
  /** More node flags for the gateway alone (an experiment: --trace-opt, a V8 setting). */
  gatewayFlags: string[];
  /** Print this saved results file again instead of running (`--report FILE`). */
  report: string | null;
}

const HELP = `npm run bench -- [options]
  --quick                 short smoke run (~1 min): 3 rounds of 2 s, 10 s soaks, 1500 payments
  --rounds N              measured rounds per scenario (default 3)
  --round-seconds S       length of each measured run (default 4)
  --warmup-seconds S      warm-up run per configuration (default 2)
  --soak-seconds S        memory soak per route (default 30; 0 skips)
  --payments N            real payments prepared for the paid scenario (default 4000)
  --payment-budget S      stop preparing payments after S seconds (default 45)
  --profile               afterwards, profile the gateway in each scenario and print the top frames
  --perf                  afterwards, one more run per scenario of the gateway and of its leanest
                          baseline under Linux perf (every thread, kernel and native code included):
                          where each one's CPU per request goes, side by side (needs perf: linux-perf)
  --perf-pair A:B         with --perf, compare configuration A against B instead (their keys, in the
                          scenarios that have both), e.g. paidrecord:paidfloor (the minimal paid server
                          with Tollgate's record against it with its own) or gateway:paidrecord
  --log-level L           gateway LOG_LEVEL (default info, the production default)
  --upstream-cpu C        CPU of the upstream (default 0, shared with the server under test)
  --postgres              gateway on a private PostgreSQL cluster (initdb in the temp dir, pinned beside it)
  --database-url URL      gateway DATABASE_URL (default: SQLite in a temp file); an empty database
  --health-interval-ms N  gateway active health-check interval (default: the gateway's own default)
  --only LIST             run only these scenarios, e.g. --only 402,free (402, free, big, paid)
  --keep                  keep the temp directory (configs, logs, proofs)
  --paired                also run the gateway and each baseline at the same time (a drifting host
                          slows both alike) and print those ratios under the targets
  --gateway-flags="F…"    more node flags for the gateway alone, e.g. --gateway-flags="--trace-opt"; its
                          stdout (V8's traces, the access lines) goes to gateway.out in the temp dir (--keep)
  --report FILE           run nothing: print a saved run again (a results file, e.g. bench/results/latest.json),
                          its targets judged by this checkout's rules`;

/** A command line or an input file the bench cannot use: printed as its message alone, no stack. */
export class UsageError extends Error {}

/** What a bench prints when it fails: a usage error's message (parseArgs' own included), else the stack. */
export function failureText(e: unknown): string {
  if (e instanceof UsageError) return e.message;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) return (e as Error).message;
  return (e as Error | null)?.stack ?? String(e);
}

/**
 * `num(value, default, min)` for a command line's numeric options: the default when the
 * option is absent, else the number, which must be finite and ≥ min (an error carrying
 * `help` otherwise). Shared by `npm run bench` and `npm run bench:scaling`.
 */
export function numberOption(help: string): (v: string | undefined, d: number, min: number) => number {
  return (v, d, min) => {
    if (v === undefined) return d;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min)
      throw new UsageError(`bad option value ${v} (expected a number ≥ ${min})\n${help}`);
    return n;
  };
}

/** With --help: prints `help` and exits. */
export function exitOnHelp(wanted: boolean | undefined, help: string): void {
  if (!wanted) return;
  console.log(help);
  process.exit(0);
}

/** `--perf-pair A:B`: two configuration keys (letters and digits), subject first. */
export function perfPairOf(v: string | undefined, perf = true): BenchOptions['perfPair'] {
  if (v === undefined) return null;
  if (!perf) throw new UsageError(`--perf-pair ${v} needs --perf (it chooses what --perf profiles)`);
  const m = /^([a-z0-9]+):([a-z0-9]+)$/i.exec(v);
  if (!m || m[1] === m[2])
    throw new UsageError(`bad --perf-pair ${v} (expected two different configuration keys, A:B)\n${HELP}`);
  return { subject: m[1]!, baseline: m[2]! };
}

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      'round-seconds': { type: 'string' },
      'warmup-seconds': { type: 'string' },
      'soak-seconds': { type: 'string' },
      payments: { type: 'string' },
      'payment-budget': { type: 'string' },
      profile: { type: 'boolean', default: false },
      perf: { type: 'boolean', default: false },
      'perf-pair': { type: 'string' },
      'log-level': { type: 'string' },
      'upstream-cpu': { type: 'string' },
      'database-url': { type: 'string' },
      postgres: { type: 'boolean', default: false },
      'health-interval-ms': { type: 'string' },
      keep: { type: 'boolean', default: false },
      paired: { type: 'boolean', default: false },
      only: { type: 'string' },
      'gateway-flags': { type: 'string' },
      report: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  exitOnHelp(values.help, HELP);
  const quick = values.quick === true;
  const num = numberOption(HELP);
  return {
    rounds: num(values.rounds, 3, 1),
    roundS: num(values['round-seconds'], quick ? 2 : 4, 2),
    warmupS: num(values['warmup-seconds'], quick ? 2 : 2, 2),
    drainMs: 500,
    soakS: num(values['soak-seconds'], quick ? 10 : 30, 0),
    connections: 32,
    payments: num(values.payments, quick ? 1500 : 4000, 0),
    paymentBudgetS: num(values['payment-budget'], quick ? 20 : 45, 1),
    profile: values.profile === true,
    perf: values.perf === true,
    perfPair: perfPairOf(values['perf-pair'], values.perf === true),
    logLevel: values['log-level'] ?? 'info',
    serverCpu: '0',
    upstreamCpu: values['upstream-cpu'] ?? '0',
    chainCpu: '1',
    loadCpu: '1',
    databaseUrl: values['database-url'] ?? null,
    postgres: values.postgres === true,
    healthIntervalMs:
      values['health-interval-ms'] === undefined ? null : num(values['health-interval-ms'], 0, 0),
    keep: values.keep === true,
    paired: values.paired === true,
    only: (values.only ?? '').split(',').filter(Boolean),
    gatewayFlags: (values['gateway-flags'] ?? '').split(/\s+/).filter(Boolean),
    report: values.report ?? null,
  };
}
