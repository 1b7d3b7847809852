/**
 * `npm run bench`: the gateway against same-run baselines on loopback, servers pinned
 * to CPU 0 and wrk to CPU 1 (DESIGN §5, method from shared/notes/performance.md).
 *   402         unpaid GET /p/bench/paid   vs bare node:http 402, @x402/express 402
 *               (and beside the minimal 402 server: the 402's own work, for reference)
 *   free        price-0 forward            vs nginx reverse proxy, direct upstream
 *   256 KB      price-0 streamed 256 KB    vs nginx, direct
 *               (both also beside a minimal node:http + undici forwarder, for reference)
 *   paid        real sandbox payments      vs minimal forwarder, nginx
 *               (and beside the minimal paid server: the paid work alone, for reference)
 * plus an RSS soak of the 402 and free routes. Prints a table and HOLDS/MISSES per
 * target, then a note per yardstick (not targets); writes bench/results/latest.json.
 * Cleans up every child on exit.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopAll, stopChildrenOnExit } from './lib/children.ts';
import { profileGateway, scenarios } from './lib/definitions.ts';
import { formatGc, takeGc } from './lib/gc-report.ts';
import { describeMachine } from './lib/machine.ts';
import { nativeProfiles } from './lib/native-profile.ts';
import { type BenchOptions, failureText, parseOptions } from './lib/options.ts';
import { formatPaired, runPaired } from './lib/paired.ts';
import { preparePayments } from './lib/payments.ts';
import { startPostgres } from './lib/postgres.ts';
import { rssBytes } from './lib/proc.ts';
import {
  challengeYardstick,
  designTargets,
  formatTable,
  formatTargets,
  paidYardstick,
  type ScenarioSummary,
  summarize,
  type Target,
} from './lib/report.ts';
import { readResults, writeResults } from './lib/results.ts';
import { type ProofSupply, runScenario, type ScenarioOptions, type Watched } from './lib/scenario.ts';
import { type SoakResult, soak } from './lib/soak.ts';
import { checkMinimalPaid, type Stack, startStack } from './lib/stack.ts';
import { ensureTools } from './lib/tools.ts';
import { writeWrkScript } from './lib/wrk.ts';

const started = Date.now();
const log = (line: string) =>
  console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}`);

/** The table, the targets (returned) and the yardsticks' notes of a run. */
function printResults(
  summaries: ScenarioSummary[],
  soaks: SoakResult[],
  opts: BenchOptions,
  facilitatorCalls: unknown,
): Target[] {
  const targets = designTargets(summaries, soaks);
  const steal = summaries.reduce((t, s) => t + s.stealSec, 0);
  console.log(`\n${formatTable(summaries)}\n`);
  console.log(
    `Servers on CPU ${opts.serverCpu} (upstream on CPU ${opts.upstreamCpu}), wrk -t1 -c${opts.connections} and the sandbox chains on CPU ${opts.loadCpu}; ` +
      `${opts.rounds} rounds of ${opts.roundS} s after a ${opts.warmupS} s warm-up; medians; ratios are medians of same-round ratios. ` +
      `Steal over all runs: ${steal.toFixed(1)} s. @x402/express facilitator stub calls: ${JSON.stringify(facilitatorCalls)}.\n`,
  );
  console.log(formatTargets(targets));
  for (const note of [challengeYardstick(summaries), paidYardstick(summaries)]) if (note) console.log(note);
  return targets;
}

/**
 * `--report FILE`: prints a saved run (a results file this bench wrote) again, its targets
 * judged by this checkout's rules. Nothing is started or measured.
 */
function reprint(file: string): void {
  const saved = readResults(file);
  console.log(
    `${file}: the run started ${saved.startedAt ?? '(unknown)'} on ${saved.machine?.cpu ?? '(unknown)'}, Node ${saved.machine?.node ?? '(unknown)'}`,
  );
  printResults(saved.scenarios, saved.soaks ?? [], saved.options, saved.facilitatorCalls ?? {});
}

async function main(opts: BenchOptions): Promise<void> {
  if (opts.report !== null) return reprint(opts.report);
  const tools = ensureTools(['taskset', 'wrk', 'nginx', ...(opts.perf ? ['perf'] : [])]);
  const machine = describeMachine(tools);
  if (machine.cpus < 2)
    throw new Error(
      `the bench pins servers and load to separate CPUs and needs 2; this machine has ${machine.cpus}`,
    );
  log(
    `${machine.cpu}, ${machine.cpus} CPUs, ${machine.os}, Node ${machine.node}, ${machine.wrk}, ${machine.nginx}`,
  );

  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  if (!opts.keep) tempDirs.add(dir);
  let stack: Stack | undefined;
  let dbProcess: Watched | undefined;
  try {
    const profileDir = opts.profile ? join(dir, 'profiles') : undefined;
    if (profileDir) mkdirSync(profileDir);
    let databaseUrl = opts.databaseUrl ?? `sqlite:${join(dir, 'tollgate.db')}`;
    let database = opts.databaseUrl
      ? opts.databaseUrl.startsWith('postgres')
        ? 'PostgreSQL'
        : 'custom DB'
      : 'SQLite';
    if (opts.postgres) {
      log(`starting a private PostgreSQL cluster on CPU ${opts.serverCpu}`);
      const pg = await startPostgres(opts.serverCpu);
      if (!opts.keep) tempDirs.add(pg.dir);
      dbProcess = { name: 'postgres', pid: pg.child.pid, tree: true };
      databaseUrl = pg.url;
      database = 'PostgreSQL';
    }
    stack = await startStack({
      dir,
      nginxBinary: tools['nginx']!,
      serverCpu: opts.serverCpu,
      upstreamCpu: opts.upstreamCpu,
      chainCpu: opts.chainCpu,
      logLevel: opts.logLevel,
      databaseUrl,
      healthIntervalMs: opts.healthIntervalMs,
      profileDir,
      nodeFlags: opts.perf ? ['--perf-basic-prof'] : [],
      ...(opts.gatewayFlags.length > 0
        ? { gatewayFlags: opts.gatewayFlags, gatewayStdout: join(dir, 'gateway.out') }
        : {}),
      log,
    });
    if (opts.gatewayFlags.length > 0)
      log(
        `--gateway-flags: the gateway runs with ${opts.gatewayFlags.join(' ')}; its stdout (V8's traces, the access lines) in ${join(dir, 'gateway.out')}${opts.keep ? '' : ' (add --keep to keep it)'}`,
      );
    if (opts.perf) {
      // node's --perf-basic-prof writes a symbol map per process; perf script reads it.
      for (const c of [stack.gateway, stack.lean402, stack.paidFloor, stack.paidRecord, stack.floor])
        tempDirs.add(`/tmp/perf-${c.pid}.map`);
      log(
        '--perf: the gateway and the minimal servers run with --perf-basic-prof throughout (the JIT names its code for perf); take the targets from a run without --perf',
      );
    }
    log(
      `gateway 402: ${stack.challenge.bytes} B body + ${stack.challenge.headerBytes} B headers, ` +
        `${stack.challenge.accepts} accept options; database ${database === 'SQLite' ? 'SQLite (temp file)' : database}`,
    );

    // Real payments, made before anything is timed; each proof is sent exactly once.
    const proofsFile = join(dir, 'proofs.txt');
    const wantsPaid = opts.only.length === 0 || opts.only.includes('paid');
    log(
      `preparing up to ${wantsPaid ? opts.payments : 0} real payments on the Solana sandbox (budget ${opts.paymentBudgetS} s)`,
    );
    const paid = await preparePayments({
      url: `${stack.gatewayBase}/paid`,
      solanaRpcUrl: stack.solanaRpcUrl,
      faucetUrl: stack.faucetUrl,
      count: wantsPaid ? opts.payments : 0,
      budgetS: opts.paymentBudgetS,
      file: proofsFile,
      onProgress: (n) => log(`  ${n} payments made`),
    });
    log(`${paid.made} payments in ${paid.seconds.toFixed(1)} s (${paid.perSecond.toFixed(0)}/s)`);
    const supply: ProofSupply = { file: proofsFile, path: '/p/bench/paid', next: 1, total: paid.made };
    if (paid.made > 0) {
      const first = readFileSync(proofsFile, 'utf8').split('\n', 1)[0]!;
      await checkMinimalPaid(stack.paidFloorBase, first, supply.path);
      await checkMinimalPaid(stack.paidRecordBase, first, supply.path);
      log(
        "minimal paid server, with its own record and with Tollgate's: refuses no payment, an altered token and a proof for another request; serves and replays a real one",
      );
    }

    const base: ScenarioOptions = {
      connections: opts.connections,
      loadCpu: opts.loadCpu,
      script: writeWrkScript(dir),
      warmupS: opts.warmupS,
      roundS: opts.roundS,
      rounds: opts.rounds,
      drainMs: opts.drainMs,
      quietCpu: Number(opts.serverCpu),
      log,
    };
    const defs = scenarios(stack, supply, database, dbProcess).filter(
      (d) => opts.only.length === 0 || opts.only.includes(d.key),
    );
    const live = stack;
    const summaries: ScenarioSummary[] = [];
    const raw: Record<string, unknown> = {};
    const soaks: SoakResult[] = [];
    const rssMB: Record<string, number> = { start: rssBytes(live.gateway.pid) / 2 ** 20 };
    const gcPort = live.gateway.info['memoryPort'];
    await takeGc(gcPort); // forget the start-up's collections
    for (const def of defs) {
      log(`scenario: ${def.title}`);
      const result = await runScenario(def.title, def.configs, {
        ...base,
        drainMs: def.drainMs ?? base.drainMs,
      });
      raw[def.key] = result.rounds;
      const gc = await takeGc(gcPort);
      if (gc) {
        raw[`${def.key}-gc`] = gc;
        log(`  gateway garbage collection in this scenario (its runs only): ${formatGc(gc)}`);
      }
      summaries.push(summarize(def.key, def.title, def.configs, def.baselines, result));
      rssMB[def.key] = rssBytes(live.gateway.pid) / 2 ** 20;
      log(`  gateway RSS now ${rssMB[def.key]!.toFixed(0)} MB`);
    }

    // Paired runs (paired.ts): the gateway beside each baseline, at the same time (no paid scenario).
    const paired: string[] = [];
    if (opts.paired) {
      for (const def of defs.filter((d) => d.key !== 'paid')) {
        log(`paired: ${def.title}`);
        const gw = def.configs.find((c) => c.key === 'gateway')!;
        const others = def.baselines.map((b) => def.configs.find((c) => c.key === b)!);
        const results = await runPaired(def.title, gw, others, {
          ...base,
          drainMs: def.drainMs ?? base.drainMs,
        });
        raw[`${def.key}-paired`] = results;
        paired.push(formatPaired(def.title, results));
      }
    }

    const profiles = opts.profile ? await profileGateway(live, defs, base) : undefined;
    const natives = opts.perf ? await nativeProfiles(defs, base, dir, opts.perfPair) : undefined;

    // The soaks come last. They read the heap after forced full collections (gc()), which leave
    // V8 in a state where streamed Buffers are reclaimed by mark-compacts again for a while (a
    // 256 KB run right after one cost 2.3x the CPU): no timed run may follow them.
    if (opts.soakS > 0) {
      for (const d of defs.filter((x) => x.key === '402' || x.key === 'free')) {
        const cfg = d.configs.find((c) => c.key === 'gateway')!;
        log(`soak: ${d.title} for ${opts.soakS} s`);
        const s = await soak(cfg, live.gateway, opts.soakS, base);
        soaks.push(s);
        log(
          `  heap after full GC ${s.retained.startMB.toFixed(1)} → ${s.retained.endMB.toFixed(1)} MB, ` +
            `RSS ${s.rss.startMB.toFixed(1)} → ${s.rss.endMB.toFixed(1)} MB (slope ${s.rss.slopeMBPerMin.toFixed(2)} MB/min), ` +
            `${s.run.rps.toFixed(0)} req/s`,
        );
      }
    }

    const targets = printResults(summaries, soaks, opts, stack.facilitator.calls);
    if (paired.length > 0) console.log(`\n${paired.join('\n')}`);

    const out = writeResults('latest.json', started, {
      machine,
      options: opts,
      database: database === 'SQLite' ? 'SQLite (temp file)' : database,
      challenge: stack.challenge,
      facilitatorCalls: stack.facilitator.calls,
      payments: { ...paid, used: supply.next - 1 },
      scenarios: summaries,
      rounds: raw,
      soaks,
      gatewayRssMB: rssMB,
      targets,
      profiles,
      natives,
    });
    log(`results written to ${out}`);
    if (profileDir && opts.keep)
      log(`profiles kept in ${profileDir} (${readdirSync(profileDir).length} files)`);
  } finally {
    await stopAll();
    await stack?.facilitator.close();
    removeTempDirs();
  }
}

/** Temp dirs (kept with --keep) and perf's symbol maps, removed however the bench ends. */
const tempDirs = new Set<string>();
function removeTempDirs(): void {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  tempDirs.clear();
}

stopChildrenOnExit('bench', removeTempDirs);

try {
  await main(parseOptions(process.argv.slice(2)));
  log('done');
} catch (e) {
  console.error(`bench failed: ${failureText(e)}`);
  await stopAll();
  process.exitCode = 1;
}
