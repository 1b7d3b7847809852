/**
 * `npm run bench:scaling`: how the gateway's cost grows (issue 14, "How cost grows").
 *   endpoints    the 402 and the price-0 forward with the bench catalogue vs with 10,000
 *                more endpoints registered (two gateways side by side, same rounds)
 *   rows         the paid path's store calls (look-up, claim, completion) on an empty
 *                redemption table vs after bulk-inserting 1,000,000 rows; SQLite and
 *                PostgreSQL; with the query plans
 *   concurrency  the 402 and the forward at 1, 4, 16, 64, 256 connections, beside the
 *                minimal forwarder (and the bare 402 server)
 *   processes    the paid path on PostgreSQL through 1 gateway process vs 2, real
 *                sandbox payments; gateway and PostgreSQL CPU per paid request
 * Servers on CPU 0, wrk and the sandbox chains on CPU 1, as in `npm run bench`. Prints the
 * curves and writes bench/results/scaling.json. Every child process, temp dir and
 * PostgreSQL cluster is removed however the run ends.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type BaseStack, startBase } from './lib/base-servers.ts';
import { spawnPinned, stopAll, stopChildrenOnExit } from './lib/children.ts';
import { describeMachine, type Machine } from './lib/machine.ts';
import { failureText } from './lib/options.ts';
import { preparePayments } from './lib/payments.ts';
import { startPostgres } from './lib/postgres.ts';
import { cpuTimes } from './lib/proc.ts';
import { formatTable, type ScenarioSummary, summarize } from './lib/report.ts';
import { writeResults } from './lib/results.ts';
import {
  type CatalogWork,
  endpointCount,
  seedCatalog,
  shapeFor,
  timeCatalogWork,
} from './lib/scaling-catalog.ts';
import { type Part, parseScalingOptions, type ScalingOptions } from './lib/scaling-options.ts';
import { type GroupSummary, runGroups } from './lib/scaling-processes.ts';
import {
  expectStatus,
  type GatewayProcess,
  newIdentity,
  startBare402,
  startGateway,
} from './lib/scaling-stack.ts';
import { type Config, type ProofSupply, runScenario, type ScenarioOptions } from './lib/scenario.ts';
import { ensureTools } from './lib/tools.ts';
import { writeWrkScript } from './lib/wrk.ts';

const SERVER_CPU = '0';
const LOAD_CPU = '1';
const started = Date.now();
const log = (line: string) =>
  console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);

/** Temp dirs to remove however the bench ends (kept with --keep). */
const tempDirs = new Set<string>();
function removeTempDirs(): void {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  tempDirs.clear();
}

const f = (x: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

interface Ctx {
  opts: ScalingOptions;
  dir: string;
  scenario: ScenarioOptions;
  base?: BaseStack;
  plain?: GatewayProcess;
}

async function baseOf(ctx: Ctx): Promise<BaseStack> {
  ctx.base ??= await startBase({ chainCpu: LOAD_CPU, upstreamCpu: SERVER_CPU, floorCpu: SERVER_CPU });
  return ctx.base;
}

/** The minimal forwarder's price-0 forward (key "floor"), the reference beside a gateway's. */
function floorConfig(base: BaseStack): Config {
  return {
    key: 'floor',
    label: 'minimal forwarder',
    url: `${base.floorBase}/free`,
    server: { name: 'undici-forward', pid: base.floor.pid },
    others: [{ name: 'upstream', pid: base.upstream.pid }],
    expect: 'ok',
  };
}

/** The gateway with the normal bench catalogue (SQLite in a temp file). */
async function plainGateway(ctx: Ctx): Promise<GatewayProcess> {
  ctx.plain ??= await startGateway({
    name: 'gateway',
    cpu: SERVER_CPU,
    dir: ctx.dir,
    databaseUrl: `sqlite:${join(ctx.dir, 'plain.db')}`,
    identity: newIdentity(),
    stack: await baseOf(ctx),
    logLevel: ctx.opts.logLevel,
  });
  return ctx.plain;
}

// ---------------------------------------------------------------------------

interface IdleCpu {
  seconds: number;
  /** CPU ms per second of each process while no request arrives (background jobs only). */
  msPerS: Record<string, number>;
}

/**
 * CPU of idle processes over `seconds`: what the background work costs (the active health
 * check lists every project, API and endpoint and probes every origin each 30 s).
 */
async function idleCpu(procs: { name: string; pid: number }[], seconds: number): Promise<IdleCpu> {
  const before = procs.map((p) => cpuTimes(p.pid));
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const msPerS: Record<string, number> = {};
  procs.forEach((p, i) => {
    const a = before[i]!;
    const b = cpuTimes(p.pid);
    msPerS[p.name] = ((b.user + b.system - a.user - a.system) * 1000) / seconds;
  });
  return { seconds, msPerS };
}

async function endpointsPart(ctx: Ctx): Promise<{
  seedS: number;
  endpoints: number;
  work: CatalogWork;
  scenarios: ScenarioSummary[];
  idle: IdleCpu;
}> {
  const base = await baseOf(ctx);
  const plain = await plainGateway(ctx);
  const shape = shapeFor(ctx.opts.endpoints);
  const identity = newIdentity();
  const file = join(ctx.dir, 'catalog.db');
  log(
    `registering ${endpointCount(shape)} endpoints through the store: ${shape.benchExtra} on the bench project's API, ` +
      `${shape.projects} projects × ${shape.apisPerProject} APIs × ${shape.endpointsPerApi}`,
  );
  const scratch = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/tollgate-scaling-') : null;
  if (scratch) tempDirs.add(scratch);
  const seedS = await seedCatalog({
    shape,
    identity,
    upstreamBase: base.upstreamBase,
    target: file,
    scratch,
  });
  log(`  seeded in ${seedS.toFixed(1)} s`);
  const work = await timeCatalogWork(file, 5);
  log(
    `  off the request path: a snapshot of the bench project (${work.snapshotMs.endpoints} endpoints) ` +
      `${work.snapshotMs.p50.toFixed(1)} ms (max ${work.snapshotMs.max.toFixed(1)}), the health check's target list ` +
      `(${work.probeListMs.targets} origins) ${work.probeListMs.p50.toFixed(0)} ms (max ${work.probeListMs.max.toFixed(0)})`,
  );
  const big = await startGateway({
    name: 'gateway-10k',
    cpu: SERVER_CPU,
    dir: ctx.dir,
    databaseUrl: `sqlite:${file}`,
    identity,
    stack: base,
    logLevel: ctx.opts.logLevel,
  });
  // The seeded catalogue is live: another project's endpoint answers its own 402.
  await expectStatus(
    `${big.base.replace('/p/bench', '/p/provider-7')}/v1/resource-0/list`,
    402,
    'seeded endpoint',
  );
  const gw = (g: GatewayProcess, name: string) => ({ name, pid: g.child.pid });
  const up = { name: 'upstream', pid: base.upstream.pid };
  const label = `${endpointCount(shape).toLocaleString('en')} more endpoints`;
  const challenge: Config[] = [
    {
      key: 'plain',
      label: 'bench catalogue',
      url: `${plain.base}/paid`,
      server: gw(plain, 'gateway'),
      expect: '402',
    },
    { key: 'catalog', label, url: `${big.base}/paid`, server: gw(big, 'gateway-10k'), expect: '402' },
  ];
  const forward: Config[] = [
    {
      key: 'plain',
      label: 'bench catalogue',
      url: `${plain.base}/free`,
      server: gw(plain, 'gateway'),
      others: [up],
      expect: 'ok',
    },
    {
      key: 'catalog',
      label,
      url: `${big.base}/free`,
      server: gw(big, 'gateway-10k'),
      others: [up],
      expect: 'ok',
    },
    floorConfig(base),
  ];
  const scenarios: ScenarioSummary[] = [];
  for (const [key, title, configs, baselines] of [
    ['endpoints-402', '402, catalogue size', challenge, ['plain']],
    ['endpoints-free', 'forward, catalogue size', forward, ['plain', 'floor']],
  ] as const) {
    log(`scenario: ${title}`);
    const r = await runScenario(title, [...configs], ctx.scenario);
    scenarios.push(summarize(key, title, [...configs], [...baselines], r));
  }
  const idleS = ctx.opts.quick ? 31 : 61;
  log(`both gateways idle for ${idleS} s (the active health check runs every 30 s)`);
  const idle = await idleCpu(
    [
      { name: 'bench catalogue', pid: plain.child.pid },
      { name: label, pid: big.child.pid },
      { name: 'upstream', pid: base.upstream.pid },
    ],
    idleS,
  );
  log(
    `  CPU ms/s: ${Object.entries(idle.msPerS)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ')}`,
  );
  await big.child.stop();
  return { seedS, endpoints: endpointCount(shape), work, scenarios, idle };
}

// ---------------------------------------------------------------------------

interface RowsResult {
  backend: string;
  rows: number;
  count: number;
  ops: number;
  insertS: number;
  sizeMB: number;
  empty: Record<string, { p50: number; p99: number; mean: number }>;
  full: Record<string, { p50: number; p99: number; mean: number }>;
  plans: Record<string, string[]>;
}

async function rowsPart(ctx: Ctx): Promise<RowsResult[]> {
  const out: RowsResult[] = [];
  const run = async (databaseUrl: string, backend: string) => {
    log(
      `redemption table, ${backend}: ${ctx.opts.ops} paid requests' store calls at 0 rows and at ${ctx.opts.rows}`,
    );
    const worker = await spawnPinned({
      name: `redemptions-${backend}`,
      cpu: SERVER_CPU,
      command: process.execPath,
      args: [new URL('./servers/scaling-redemptions.ts', import.meta.url).pathname],
      env: {
        BENCH_DATABASE_URL: databaseUrl,
        BENCH_ROWS: String(ctx.opts.rows),
        BENCH_OPS: String(ctx.opts.ops),
        BENCH_WARMUP: String(Math.max(50, Math.round(ctx.opts.ops / 10))),
      },
      readyTimeoutMs: 30 * 60_000,
    });
    const r = worker.info as unknown as RowsResult;
    await worker.stop();
    log(
      `  ${backend}: inserted in ${r.insertS.toFixed(1)} s, ${r.sizeMB.toFixed(0)} MB; claim p50 ${f(r.empty['claim']!.p50)} → ${f(r.full['claim']!.p50)} µs`,
    );
    out.push(r);
  };
  await run(`sqlite:${join(ctx.dir, 'redemptions.db')}`, 'SQLite');
  // PostgreSQL on the other CPU (a database server apart from the gateway), so the client
  // process and the server do not share a core.
  log(`starting a private PostgreSQL cluster on CPU ${LOAD_CPU}`);
  const cluster = await startPostgres(LOAD_CPU);
  if (!ctx.opts.keep) tempDirs.add(cluster.dir);
  try {
    await run(cluster.url, 'PostgreSQL');
  } finally {
    await cluster.child.stop();
  }
  return out;
}

// ---------------------------------------------------------------------------

async function concurrencyPart(ctx: Ctx): Promise<{ connections: number; summary: ScenarioSummary }[]> {
  const base = await baseOf(ctx);
  const plain = await plainGateway(ctx);
  const bare = await startBare402({ cpu: SERVER_CPU, dir: ctx.dir, gatewayBase: plain.base });
  const gw = { name: 'gateway', pid: plain.child.pid };
  const up = { name: 'upstream', pid: base.upstream.pid };
  const configs: Config[] = [
    { key: 'g402', label: 'Tollgate 402', url: `${plain.base}/paid`, server: gw, expect: '402' },
    {
      key: 'bare',
      label: 'bare node:http 402',
      url: bare.url,
      server: { name: 'bare-402', pid: bare.child.pid },
      expect: '402',
    },
    {
      key: 'gfree',
      label: 'Tollgate forward',
      url: `${plain.base}/free`,
      server: gw,
      others: [up],
      expect: 'ok',
    },
    floorConfig(base),
  ];
  const out: { connections: number; summary: ScenarioSummary }[] = [];
  for (const c of ctx.opts.levels) {
    const title = `${c} connections`;
    log(`scenario: ${title}`);
    const r = await runScenario(title, configs, { ...ctx.scenario, connections: c });
    out.push({ connections: c, summary: summarize(`c${c}`, title, configs, ['floor', 'bare'], r) });
  }
  await bare.child.stop();
  return out;
}

// ---------------------------------------------------------------------------

async function processesPart(ctx: Ctx): Promise<{ payments: number; groups: GroupSummary[] }> {
  const base = await baseOf(ctx);
  log(
    `starting a private PostgreSQL cluster on CPU ${SERVER_CPU} (beside the gateways, as bench --postgres)`,
  );
  const cluster = await startPostgres(SERVER_CPU);
  if (!ctx.opts.keep) tempDirs.add(cluster.dir);
  const monitor = new pg.Client({ connectionString: cluster.url, application_name: 'bench-monitor' });
  try {
    const identity = newIdentity();
    const pgGateway = (name: string) =>
      startGateway({
        name,
        cpu: SERVER_CPU,
        dir: ctx.dir,
        databaseUrl: cluster.url,
        identity,
        stack: base,
        logLevel: ctx.opts.logLevel,
      });
    const one = await pgGateway('gateway-pg-1');
    const two = await pgGateway('gateway-pg-2');
    await monitor.connect();
    log(`preparing up to ${ctx.opts.payments} real payments (budget ${ctx.opts.paymentBudgetS} s)`);
    const all = join(ctx.dir, 'proofs.txt');
    const paid = await preparePayments({
      url: `${one.base}/paid`,
      solanaRpcUrl: base.solanaRpcUrl,
      faucetUrl: base.faucetUrl,
      count: ctx.opts.payments,
      budgetS: ctx.opts.paymentBudgetS,
      file: all,
      onProgress: (n) => log(`  ${n} payments made`),
    });
    log(`${paid.made} payments in ${paid.seconds.toFixed(1)} s`);
    // Half the proofs for the single process, a quarter for each of the two (same total rate).
    const lines = readFileSync(all, 'utf8').split('\n').filter(Boolean);
    const supply = (name: string, keep: (i: number) => boolean): ProofSupply => {
      const file = join(ctx.dir, name);
      const mine = lines.filter((_, i) => keep(i));
      writeFileSync(file, `${mine.join('\n')}\n`);
      return { file, path: '/p/bench/paid', next: 1, total: mine.length };
    };
    const single = supply('proofs-single.txt', (i) => i % 4 < 2);
    const first = supply('proofs-first.txt', (i) => i % 4 === 2);
    const second = supply('proofs-second.txt', (i) => i % 4 === 3);
    const up = { name: 'upstream', pid: base.upstream.pid };
    const paidCfg = (g: GatewayProcess, name: string, proofs: ProofSupply): Config => ({
      key: name,
      label: name,
      url: `${g.base}/paid`,
      server: { name, pid: g.child.pid },
      others: [up],
      expect: 'ok',
      proofs,
    });
    const { summaries } = await runGroups(
      [
        {
          key: 'one',
          label: '1 process',
          members: [{ cfg: paidCfg(one, 'gateway-pg-1', single), connections: 32 }],
        },
        {
          key: 'two',
          label: '2 processes',
          members: [
            { cfg: paidCfg(one, 'gateway-pg-1', first), connections: 16 },
            { cfg: paidCfg(two, 'gateway-pg-2', second), connections: 16 },
          ],
        },
      ],
      { name: 'postgres', pid: cluster.child.pid, tree: true },
      monitor,
      { ...ctx.scenario, roundS: ctx.opts.paidRoundS, drainMs: 1000 },
    );
    await one.child.stop();
    await two.child.stop();
    return { payments: paid.made, groups: summaries };
  } finally {
    await monitor.end().catch(() => undefined);
    await cluster.child.stop();
  }
}

// ---------------------------------------------------------------------------

function formatRows(rows: RowsResult[]): string {
  const lines = [
    'store calls of one paid request, µs (sequential; p50 / p99)',
    `${'backend'.padEnd(11)}${'call'.padEnd(10)}${'0 rows'.padStart(18)}${'after bulk insert'.padStart(22)}`,
  ];
  for (const r of rows) {
    for (const op of ['lookup', 'claim', 'complete', 'total']) {
      const a = r.empty[op]!;
      const b = r.full[op]!;
      lines.push(
        `${r.backend.padEnd(11)}${op.padEnd(10)}${`${f(a.p50)} / ${f(a.p99)}`.padStart(18)}${`${f(b.p50)} / ${f(b.p99)}`.padStart(22)}`,
      );
    }
    lines.push(
      `${' '.repeat(11)}${r.count.toLocaleString('en')} rows after, ${r.sizeMB.toFixed(0)} MB, bulk insert ${r.insertS.toFixed(1)} s`,
    );
    for (const [k, plan] of Object.entries(r.plans))
      lines.push(`${' '.repeat(11)}plan ${k}: ${plan.join(' | ')}`);
  }
  return lines.join('\n');
}

function formatConcurrency(levels: { connections: number; summary: ScenarioSummary }[]): string {
  const head = `${'conns'.padStart(5)}  ${'config'.padEnd(20)}${'req/s'.padStart(8)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'CPU µs/req'.padStart(12)}${'CPU0/1 %'.padStart(10)}  vs minimal forwarder (rps)`;
  const lines = [head];
  for (const { connections, summary } of levels) {
    for (const c of summary.configs) {
      const ratio = c.key === 'floor' ? '' : `${f(c.ratios['floor']!, 2)}×`;
      const bare = c.key === 'g402' ? `  (${f(c.ratios['bare']!, 2)}× bare 402)` : '';
      lines.push(
        `${String(connections).padStart(5)}  ${c.label.padEnd(20)}${f(c.rps).padStart(8)}${f(c.p50Ms, 2).padStart(9)}${f(c.p99Ms, 2).padStart(9)}${f(c.cpuUsPerReq).padStart(12)}${`${f(c.cpuBusy[0] * 100)}/${f(c.cpuBusy[1] * 100)}`.padStart(10)}  ${ratio}${bare}`,
      );
      for (const p of c.problems) lines.push(`${' '.repeat(7)}! ${p}`);
    }
  }
  return lines.join('\n');
}

function formatGroups(groups: GroupSummary[]): string {
  const lines = [
    `${'config'.padEnd(13)}${'total req/s'.padStart(12)}${'(min–max)'.padStart(13)}${'per process'.padStart(14)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'gw µs/req'.padStart(11)}${'PG µs/req'.padStart(11)}${'WAL B/req'.padStart(11)}${'CPU0/1 %'.padStart(10)}`,
  ];
  for (const g of groups) {
    lines.push(
      `${g.label.padEnd(13)}${f(g.totalRps).padStart(12)}${`(${f(g.totalRange[0])}–${f(g.totalRange[1])})`.padStart(13)}${g.perProcessRps
        .map((x) => f(x))
        .join(' + ')
        .padStart(
          14,
        )}${f(g.p50Ms, 1).padStart(8)}${f(g.p99Ms, 1).padStart(8)}${f(g.gatewayUsPerReq).padStart(11)}${f(g.dbUsPerReq).padStart(11)}${f(g.walBytesPerReq).padStart(11)}${`${f(g.cpuBusy[0] * 100)}/${f(g.cpuBusy[1] * 100)}`.padStart(10)}`,
    );
    const waits = Object.entries(g.waits)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${(v * 100).toFixed(0)} %`)
      .join(', ');
    lines.push(`${' '.repeat(13)}gateways' PostgreSQL backends: ${waits}`);
    for (const p of g.problems) lines.push(`${' '.repeat(13)}! ${p}`);
  }
  const one = groups.find((g) => g.key === 'one');
  if (one && Number.isFinite(one.gatewayUsPerReq) && Number.isFinite(one.dbUsPerReq)) {
    const gwCore = 1e6 / one.gatewayUsPerReq;
    const pgCore = 1e6 / one.dbUsPerReq;
    lines.push(
      `per core, from the 1-process run: a gateway core carries ${f(gwCore)} paid req/s, a PostgreSQL core ${f(pgCore)}; ` +
        `one primary core feeds ${f(pgCore / gwCore, 1)} gateway cores`,
    );
  }
  return lines.join('\n');
}

async function main(opts: ScalingOptions): Promise<void> {
  const tools = ensureTools(['taskset', 'wrk', 'nginx']);
  const machine: Machine = describeMachine(tools);
  if (machine.cpus < 2) throw new Error(`the bench needs 2 CPUs; this machine has ${machine.cpus}`);
  log(
    `${machine.cpu}, ${machine.cpus} CPUs, ${machine.os}, Node ${machine.node}, SQLite ${machine.sqlite}, ${machine.wrk}`,
  );
  log(`parts: ${opts.parts.join(', ')}${opts.quick ? ' (quick)' : ''}`);
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-scaling-'));
  if (!opts.keep) tempDirs.add(dir);
  const ctx: Ctx = {
    opts,
    dir,
    scenario: {
      connections: 32,
      loadCpu: LOAD_CPU,
      script: writeWrkScript(dir),
      warmupS: opts.warmupS,
      roundS: opts.roundS,
      rounds: opts.rounds,
      drainMs: 500,
      quietCpu: Number(SERVER_CPU),
      log,
    },
  };
  const results: Partial<Record<Part, unknown>> = {};
  const printed: string[] = [];
  try {
    if (opts.parts.includes('endpoints')) {
      const r = await endpointsPart(ctx);
      results.endpoints = r;
      printed.push(
        `\n== ${r.endpoints.toLocaleString('en')} more endpoints registered (seeded in ${r.seedS.toFixed(1)} s), wrk -c32 ==\n${formatTable(r.scenarios)}\n` +
          `catalogue work off the request path: bench project snapshot (${r.work.snapshotMs.endpoints} endpoints, every 1 s while used) ` +
          `${r.work.snapshotMs.p50.toFixed(1)} ms, health-check target list (${r.work.probeListMs.targets} origins, every 30 s) ${r.work.probeListMs.p50.toFixed(0)} ms\n` +
          `idle for ${r.idle.seconds} s, CPU ms per second: ${Object.entries(r.idle.msPerS)
            .map(([k, v]) => `${k} ${v.toFixed(2)}`)
            .join(', ')}`,
      );
    }
    if (opts.parts.includes('concurrency')) {
      const r = await concurrencyPart(ctx);
      results.concurrency = r;
      printed.push(`\n== connections 1 → 256 ==\n${formatConcurrency(r)}`);
    }
    if (opts.parts.includes('processes')) {
      const r = await processesPart(ctx);
      results.processes = r;
      printed.push(
        `\n== paid path on PostgreSQL, 1 vs 2 gateway processes (all on CPU ${SERVER_CPU} with PostgreSQL and the upstream; ${r.payments} payments) ==\n${formatGroups(r.groups)}`,
      );
    }
    // Last: the bulk insert writes a large file and a large cluster; nothing else runs beside it.
    if (opts.parts.includes('rows')) {
      await stopAll();
      ctx.base = undefined;
      ctx.plain = undefined;
      const r = await rowsPart(ctx);
      results.rows = r;
      printed.push(
        `\n== redemption table: empty vs ${opts.rows.toLocaleString('en')} rows ==\n${formatRows(r)}`,
      );
    }
    console.log(printed.join('\n'));
    console.log(
      `\nServers pinned to CPU ${SERVER_CPU}, wrk -t1 and the sandbox chains on CPU ${LOAD_CPU}; ${opts.rounds} rounds of ${opts.roundS} s ` +
        `(paid ${opts.paidRoundS} s) after a ${opts.warmupS} s warm-up per configuration; medians.`,
    );
    const out = writeResults('scaling.json', started, {
      machine,
      options: opts,
      results,
    });
    log(`results written to ${out}`);
  } finally {
    await stopAll();
    removeTempDirs();
  }
}

stopChildrenOnExit('bench:scaling', removeTempDirs);

try {
  await main(parseScalingOptions(process.argv.slice(2)));
  log('done');
} catch (e) {
  console.error(`bench:scaling failed: ${failureText(e)}`);
  await stopAll();
  process.exitCode = 1;
}
