/**
 * The real gateway for the bench, in its own process: main.ts's V8 tuning
 * (startup/v8-tuning.ts), configuration from the environment (loadConfig), then the
 * production composition root (createGateway:
 * openStore + createVerifiers + assembleDeps + buildApp), like main.ts minus the
 * in-process sandbox chains (the bench runs those in another process). Seeds the
 * bench's project (seed.ts).
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { createGateway } from '../../packages/gateway/src/app.ts';
import { loadConfig, withConfig } from '../../packages/gateway/src/config.ts';
import { tuneV8 } from '../../packages/gateway/src/startup/v8-tuning.ts';
import type { GcByKind } from '../lib/gc-report.ts';
import { announce, exitOnSignal } from './announce.ts';
import { BENCH_SLUG, seedBenchProject } from './seed.ts';

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
}

const upstreamUrl = need('BENCH_UPSTREAM_URL');
const providerSolana = need('BENCH_PROVIDER_SOLANA');
const providerSui = process.env['BENCH_PROVIDER_SUI'];

// As main.ts does before it builds the gateway.
tuneV8();
const config = withConfig(loadConfig(process.env, []), { port: 0 });
const gateway = await createGateway(config);
const { store, catalog } = gateway.deps;

await seedBenchProject(store, catalog, config, { upstreamUrl, providerSolana, providerSui });
gateway.start();

await gateway.app.listen({ port: 0, host: '127.0.0.1' });
const address = gateway.app.server.address();
const memoryPort = process.env['BENCH_MEMORY_REPORT'] === '1' ? await startMemoryReport() : null;
announce({
  port: typeof address === 'object' && address ? address.port : 0,
  slug: BENCH_SLUG,
  database: config.databaseUrl,
  memoryPort,
});
exitOnSignal(() => gateway.close());

// SIGUSR2 starts the V8 CPU profiler, the next SIGUSR2 writes <BENCH_PROFILE_DIR>/<n>.cpuprofile
// and answers on stderr, so the bench can profile one timed window and nothing else.
const profileDir = process.env['BENCH_PROFILE_DIR'];
if (profileDir) {
  const session = new Session();
  session.connect();
  let running = false;
  let n = 0;
  process.on('SIGUSR2', async () => {
    if (!running) {
      running = true;
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      process.stderr.write('profile:started\n');
      return;
    }
    running = false;
    const { profile } = await session.post('Profiler.stop');
    const file = join(profileDir, `${++n}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    process.stderr.write(`profile:written ${file}\n`);
  });
}

/**
 * Memory for the soak. Once a second, RSS and the lowest V8 heap use seen in that second go
 * to stderr (sampled every 100 ms, so they track the heap just after collections). A loopback
 * port answers GET /memory with the heap after two full collections (needs --expose-gc), which
 * the bench reads before and after a soak: growth there is memory the gateway kept.
 */
async function startMemoryReport(): Promise<number> {
  let heapMin = Number.POSITIVE_INFINITY;
  setInterval(() => {
    heapMin = Math.min(heapMin, getHeapStatistics().used_heap_size);
  }, 100).unref();
  setInterval(() => {
    process.stderr.write(`mem ${JSON.stringify({ rss: process.memoryUsage.rss(), heapMin })}\n`);
    heapMin = Number.POSITIVE_INFINITY;
  }, 1000).unref();
  const gc = (globalThis as { gc?: () => void }).gc;
  const pauses = gcPauses();
  const server = createServer((req, res) => {
    // GET /gc: the collections since the last GET /gc (bench/lib/gc-report.ts), without collecting.
    if (req.url === '/gc') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(pauses.take()));
      return;
    }
    gc?.();
    gc?.();
    const m = process.memoryUsage();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ collected: gc !== undefined, rss: m.rss, heapUsed: m.heapUsed, external: m.external }),
    );
  });
  server.unref();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** V8's collections as they happen (perf_hooks 'gc' entries): count, total and longest pause by kind. */
function gcPauses(): { take(): GcByKind } {
  const KINDS: Record<number, string> = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
  };
  let byKind: GcByKind = {};
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = KINDS[(e as unknown as { detail: { kind: number } }).detail.kind] ?? 'other';
      const k = byKind[kind] ?? { count: 0, totalMs: 0, maxMs: 0 };
      byKind[kind] = k;
      k.count++;
      k.totalMs += e.duration;
      k.maxMs = Math.max(k.maxMs, e.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  return {
    take() {
      const out = byKind;
      byKind = {};
      return out;
    },
  };
}
