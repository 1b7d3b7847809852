/**
 * `npm run refund -- --list | --id <redemptionId> | --all [--chain solana|sui] [--dry-run] [--json] [--config file]`:
 * reads the gateway's configuration as `npm start` does, opens its database, and lists
 * the payments undelivered past TOLLGATE_UNDELIVERED_AFTER_SEC or pays them back from
 * the platform wallet (ops/refund.ts). Exit status: 0 done (also when nothing was due),
 * 1 something was not refunded (see the errors), 2 bad usage or configuration.
 */
import { type Config, type EnvInput, loadConfig } from '../config.ts';
import { undeliveredBefore } from '../payments/payment-status.ts';
import type { Chain, RefundCandidate, Store } from '../store/store.ts';
import {
  type CommandIo,
  parseFlags,
  prepareCommand,
  table,
  UsageError,
  usdc,
  withStore,
} from './command-support.ts';
import { EXIT, openChain } from './payout-command.ts';
import { type RefundReport, runRefund } from './refund.ts';

export const REFUND_USAGE =
  'usage: npm run refund -- --list | --id <redemptionId> | --all [--chain solana|sui] [--dry-run] [--json] [--config <file>]';

interface RefundArgs {
  mode: 'list' | 'id' | 'all';
  id: string | null;
  chain: Chain | undefined;
  dryRun: boolean;
  json: boolean;
}

function parse(argv: readonly string[]): RefundArgs {
  const values = parseFlags(argv, {
    list: { type: 'boolean' },
    id: { type: 'string' },
    all: { type: 'boolean' },
    chain: { type: 'string' },
    'dry-run': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const id = typeof values['id'] === 'string' ? values['id'] : null;
  const modes = [values['list'] === true, id !== null, values['all'] === true].filter(Boolean).length;
  if (modes !== 1) throw new UsageError('give exactly one of --list, --id <redemptionId>, --all');
  if (id !== null && !/^rdm_[0-9a-zA-Z]{1,64}$/.test(id))
    throw new UsageError('--id must be a payment id (rdm_…)');
  const chain = values['chain'];
  if (chain !== undefined && chain !== 'solana' && chain !== 'sui')
    throw new UsageError('--chain must be solana or sui');
  if (chain !== undefined && id !== null) throw new UsageError('--chain goes with --list or --all');
  const dryRun = values['dry-run'] === true;
  if (dryRun && values['list']) throw new UsageError('--dry-run goes with --id or --all');
  return {
    mode: values['list'] ? 'list' : id !== null ? 'id' : 'all',
    id,
    chain,
    dryRun,
    json: values['json'] === true,
  };
}

/** 3d 4h, 2h 5m, 7m 12s, 40s. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const [d, h, m] = [Math.floor(s / 86_400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60];
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

interface Listed extends RefundCandidate {
  project: string | null;
  status: 'undelivered' | 'refunding';
}

async function listPayments(store: Store, config: Readonly<Config>, chain: Chain | undefined, nowMs: number) {
  const filter = { network: config.chainNetwork, ...(chain ? { chain } : {}) };
  const undelivered = await store.refunds.undelivered({
    ...filter,
    createdBeforeMs: undeliveredBefore(nowMs, config.undeliveredAfterSec * 1000),
    limit: 10_000,
  });
  const refunding: RefundCandidate[] = [];
  for (const r of await store.refunds.unfinished(filter)) {
    const c = await store.refunds.candidate(r.redemptionId);
    if (c) refunding.push(c);
  }
  const slugs = new Map<string, string | null>();
  const out: Listed[] = [];
  for (const [status, list] of [
    ['refunding', refunding],
    ['undelivered', undelivered],
  ] as const) {
    for (const c of list) {
      let project: string | null = null;
      if (c.projectId) {
        if (!slugs.has(c.projectId))
          slugs.set(c.projectId, (await store.projects.byId(c.projectId))?.slug ?? null);
        project = slugs.get(c.projectId) ?? null;
      }
      out.push({ ...c, project, status });
    }
  }
  return out;
}

function formatList(list: Listed[], config: Readonly<Config>, nowMs: number): string {
  const head = `Payments undelivered ${formatAge(config.undeliveredAfterSec * 1000)} after payment on ${config.chainNetwork}`;
  if (list.length === 0) return `${head}\nnone\n`;
  const rows = [
    ['id', 'chain', 'payer', 'amount (USDC)', 'age', 'project', 'status'],
    ...list.map((c) => [
      c.id,
      c.chain,
      c.payer,
      usdc(c.amount),
      formatAge(nowMs - c.createdAtMs),
      c.project ?? (c.projectId ? `${c.projectId} (deleted)` : '-'),
      `${c.status}${c.x402Version === 2 ? ' (v2)' : ''}`,
    ]),
  ];
  const total = list.filter((c) => c.status === 'undelivered').reduce((s, c) => s + c.amount, 0n);
  return [head, ...table(rows), `${list.length} payments, ${usdc(total)} USDC undelivered`, ''].join('\n');
}

const listJson = (list: Listed[], config: Readonly<Config>, nowMs: number) =>
  JSON.stringify(
    {
      network: config.chainNetwork,
      undeliveredAfterSec: config.undeliveredAfterSec,
      unit: 'USDC',
      payments: list.map((c) => ({
        id: c.id,
        chain: c.chain,
        network: c.network,
        txId: c.txId,
        payer: c.payer,
        amount: usdc(c.amount),
        amountAtomic: c.amount.toString(),
        fee: usdc(c.fee),
        x402Version: c.x402Version,
        createdAt: new Date(c.createdAtMs).toISOString(),
        ageSec: Math.floor((nowMs - c.createdAtMs) / 1000),
        project: c.project,
        status: c.status,
      })),
    },
    null,
    2,
  );

/** The report for a person: one row per payment, then a summary line and the errors. */
export function formatRefundReport(r: RefundReport): string {
  const head = `${r.dryRun ? 'Refund plan (dry run)' : 'Refund'} on ${r.network}`;
  const count = (state: string) => r.lines.filter((l) => l.state === state).length;
  const summary = r.dryRun
    ? `would refund ${count('planned')} payments, ${usdc(r.lines.filter((l) => l.state === 'planned').reduce((s, l) => s + l.amount, 0n))} USDC`
    : `refunded ${r.refunded} payments, ${usdc(r.totalRefunded)} USDC; not charged ${count('not_charged')}, skipped ${count('skipped')}, failed ${count('failed')}, unresolved ${count('unresolved')}`;
  // Paid back in this run, of which the provider had already received its share.
  const kept = r.lines.filter((l) => l.state === 'refunded' && l.reason === undefined && l.providerKept > 0n);
  const owed = kept.length
    ? [
        `providers owe back ${usdc(kept.reduce((s, l) => s + l.providerKept, 0n))} USDC they received for these payments`,
      ]
    : [];
  if (r.lines.length === 0)
    return `${head}\nnothing to refund\n${r.errors.map((e) => `error: ${e}\n`).join('')}`;
  const rows = [
    ['payment', 'chain', 'payer', 'amount (USDC)', 'provider kept', 'tx', 'state'],
    ...r.lines.map((l) => [
      l.redemptionId,
      l.chain,
      l.payer,
      usdc(l.amount),
      usdc(l.providerKept),
      l.tx ?? '-',
      `${l.state}${l.recovered ? ' (earlier run)' : ''}${l.reason ? `: ${l.reason}` : ''}`,
    ]),
  ];
  return [head, ...table(rows), summary, ...owed, ...r.errors.map((e) => `error: ${e}`), ''].join('\n');
}

export function refundReportJson(r: RefundReport): string {
  return JSON.stringify(
    {
      ...r,
      totalRefunded: usdc(r.totalRefunded),
      totalRefundedAtomic: r.totalRefunded.toString(),
      lines: r.lines.map((l) => ({
        ...l,
        amount: usdc(l.amount),
        amountAtomic: l.amount.toString(),
        providerKept: usdc(l.providerKept),
      })),
    },
    null,
    2,
  );
}

export async function refundCommand(
  argv: readonly string[],
  env: EnvInput,
  io: CommandIo,
  extra: { now?: () => number; confirmTimeoutMs?: number; pollMs?: number } = {},
): Promise<number> {
  const ready = await prepareCommand({ name: 'refund', usage: REFUND_USAGE, io }, () => {
    const args = parse(argv);
    return { args, config: loadConfig(env, argv) };
  });
  if (!ready) return EXIT.usage;
  const { args, config } = ready;
  const now = extra.now ?? Date.now;
  return withStore(
    config.databaseUrl,
    async (store) => {
      if (args.mode === 'list') {
        const list = await listPayments(store, config, args.chain, now());
        io.out(args.json ? `${listJson(list, config, now())}\n` : formatList(list, config, now()));
        return EXIT.ok;
      }
      const report = await runRefund({
        store,
        openChain: (chain) => openChain(config, chain),
        network: config.chainNetwork,
        undeliveredAfterMs: config.undeliveredAfterSec * 1000,
        target:
          args.id !== null ? { id: args.id } : { all: true, ...(args.chain ? { chain: args.chain } : {}) },
        dryRun: args.dryRun,
        ...extra,
        log: (line) => io.err(`${line}\n`),
      });
      io.out(args.json ? `${refundReportJson(report)}\n` : formatRefundReport(report));
      return report.ok ? EXIT.ok : EXIT.failed;
    },
    (e) => {
      io.err(`tollgate refund: ${e.message}\n`);
      return EXIT.failed;
    },
  );
}
