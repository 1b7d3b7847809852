/**
 * The scenarios of the bench (which configurations run side by side, which are the
 * baselines) and the optional profiling pass over the gateway's configuration of each.
 */
import type { ProfileSummary } from './profile.ts';
import { formatProfile, summarizeProfile } from './profile.ts';
import { type Config, measure, type ProofSupply, type ScenarioOptions, type Watched } from './scenario.ts';
import { resetMinimalPaid, type Stack } from './stack.ts';

export interface ScenarioDef {
  key: string;
  title: string;
  configs: Config[];
  baselines: string[];
  drainMs?: number;
}

export function scenarios(stack: Stack, supply: ProofSupply, database: string, db?: Watched): ScenarioDef[] {
  const gw = { name: 'gateway', pid: stack.gateway.pid };
  const up = { name: 'upstream', pid: stack.upstream.pid };
  const ngx = { name: 'nginx', pid: stack.nginx.pid, tree: true };
  const chain = { name: 'chains', pid: stack.chains.pid };
  const forward = (path: string): Config[] => [
    {
      key: 'gateway',
      label: 'Tollgate (price 0)',
      url: `${stack.gatewayBase}/${path}`,
      server: gw,
      others: [up],
      expect: 'ok',
    },
    {
      key: 'nginx',
      label: 'nginx proxy',
      url: `${stack.nginxBase}/${path}`,
      server: ngx,
      others: [up],
      expect: 'ok',
    },
    {
      key: 'direct',
      label: 'direct upstream',
      url: `${stack.upstreamBase}/${path}`,
      server: up,
      expect: 'ok',
    },
    {
      key: 'floor',
      label: 'minimal forwarder',
      url: `${stack.floorBase}/${path}`,
      server: { name: 'undici-forward', pid: stack.floor.pid },
      others: [up],
      expect: 'ok',
    },
  ];
  /**
   * A minimal paid server (bench/servers/minimal-paid.ts). It takes the same proofs, from the
   * first, each run: it keeps its own redemptions, and before each run forgets those it made.
   */
  const minimalPaid = (
    key: string,
    label: string,
    base: string,
    server: { name: string; pid: number },
  ): Config => {
    const proofs: ProofSupply = { ...supply };
    return {
      key,
      label,
      url: `${base}${supply.path}`,
      server,
      others: [up, chain],
      expect: 'ok',
      proofs,
      before: async () => {
        proofs.next = 1;
        await resetMinimalPaid(base);
      },
    };
  };
  // With the gateway's redemption record (BENCH_RECORD=tollgate): only beside a gateway on
  // SQLite, the database it keeps that record in (bench/servers/paid-record.ts).
  const paidRecord: Config[] =
    database === 'SQLite'
      ? [
          minimalPaid('paidrecord', "minimal paid, Tollgate's record", stack.paidRecordBase, {
            name: 'minimal-paid-record',
            pid: stack.paidRecord.pid,
          }),
        ]
      : [];
  return [
    {
      key: '402',
      title: '402 challenge',
      configs: [
        {
          key: 'gateway',
          label: 'Tollgate 402',
          url: `${stack.gatewayBase}/paid`,
          server: gw,
          expect: '402',
        },
        {
          key: 'lean402',
          label: 'minimal 402 server',
          url: stack.lean402Url,
          server: { name: 'minimal-402', pid: stack.lean402.pid },
          expect: '402',
        },
        {
          key: 'bare',
          label: 'bare node:http 402',
          url: stack.bare402Url,
          server: { name: 'bare-402', pid: stack.bare402.pid },
          expect: '402',
        },
        {
          key: 'x402',
          label: '@x402/express 402',
          url: stack.x402Url,
          server: { name: 'x402-express', pid: stack.x402.pid },
          expect: '402',
        },
      ],
      baselines: ['bare', 'x402', 'lean402'],
    },
    {
      key: 'free',
      title: 'forward, no payment',
      configs: forward('free'),
      baselines: ['nginx', 'direct', 'floor'],
    },
    {
      key: 'big',
      title: '256 KB streamed',
      configs: forward('big'),
      baselines: ['nginx', 'direct', 'floor'],
    },
    {
      key: 'paid',
      title: 'paid (Solana sandbox)',
      configs: [
        {
          key: 'gateway',
          label: `Tollgate paid, ${database}`,
          url: `${stack.gatewayBase}/paid`,
          server: gw,
          others: db ? [up, chain, db] : [up, chain],
          expect: 'ok',
          proofs: supply,
        },
        minimalPaid('paidfloor', 'minimal paid server, SQLite', stack.paidFloorBase, {
          name: 'minimal-paid',
          pid: stack.paidFloor.pid,
        }),
        ...paidRecord,
        {
          key: 'nginx',
          label: 'nginx proxy',
          url: `${stack.nginxBase}/free`,
          server: ngx,
          others: [up],
          expect: 'ok',
        },
        {
          key: 'floor',
          label: 'minimal forwarder',
          url: `${stack.floorBase}/free`,
          server: { name: 'undici-forward', pid: stack.floor.pid },
          others: [up],
          expect: 'ok',
        },
      ],
      baselines: ['floor', 'paidfloor', ...paidRecord.map((c) => c.key), 'nginx'],
      drainMs: 1000,
    },
  ];
}

/** One more run per scenario with the V8 profiler on inside the gateway (SIGUSR2 toggles it). */
export async function profileGateway(
  stack: Stack,
  defs: ScenarioDef[],
  o: ScenarioOptions,
): Promise<Record<string, ProfileSummary>> {
  const out: Record<string, ProfileSummary> = {};
  for (const def of defs) {
    const cfg = def.configs.find((c) => c.key === 'gateway')!;
    if (cfg.proofs && cfg.proofs.next > cfg.proofs.total) {
      o.log(`profile ${def.title}: skipped, no proofs left`);
      continue;
    }
    const started = stack.gateway.waitStderr(/^profile:started/, 10_000);
    process.kill(stack.gateway.pid, 'SIGUSR2');
    await started;
    await measure(cfg, o.roundS, { ...o, drainMs: def.drainMs ?? o.drainMs });
    const written = stack.gateway.waitStderr(/^profile:written /, 30_000);
    process.kill(stack.gateway.pid, 'SIGUSR2');
    const file = (await written).replace(/^profile:written /, '').trim();
    out[def.key] = summarizeProfile(file, 25);
    console.log(`\n${formatProfile(`gateway profile, ${def.title}`, out[def.key]!)}`);
  }
  return out;
}
