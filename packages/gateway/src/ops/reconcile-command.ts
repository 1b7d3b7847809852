/**
 * `npm run reconcile -- --from <ISO|ms> [--to <ISO|ms>] [--chain solana|sui] [--json]
 * [--concurrency N] [--config file]`: reads the gateway's configuration as `npm start`
 * does, opens its database, re-reads every redemption's (and payout's) transaction of
 * the range from the chains and prints a summary, then each mismatch with its
 * transaction. Exit status: 0 everything in range matched, 1 a mismatch (named), 2 bad
 * usage or configuration, 3 no mismatch but something could not be checked (named), or
 * the run could not finish.
 */
import type { TransactionSource } from '../chains/chain.ts';
import { createSolanaSource } from '../chains/solana/source.ts';
import { createSuiSource } from '../chains/sui/source.ts';
import { type Config, ConfigError, type EnvInput, loadConfig } from '../config.ts';
import { platformAddress, USDC_ASSET } from '../marketplace/quote.ts';
import type { Chain } from '../store/store.ts';
import {
  type CommandIo,
  parseFlags,
  prepareCommand,
  USAGE_EXIT,
  UsageError,
  withStore,
} from './command-support.ts';
import { type ReconcileReport, runReconcile } from './reconcile.ts';

export const RECONCILE_USAGE =
  'usage: npm run reconcile -- --from <ISO time|ms> [--to <ISO time|ms>] [--chain solana|sui] [--concurrency N] [--json] [--config <file>]';

export const RECONCILE_EXIT = { ok: 0, mismatch: 1, usage: USAGE_EXIT, incomplete: 3 } as const;

interface ReconcileArgs {
  fromMs: number;
  toMs: number;
  chain: Chain | undefined;
  concurrency: number;
  json: boolean;
}

/** `2026-11-25T10:00:00Z`, `2026-11-25`, or milliseconds since the epoch. */
export function parseTime(value: string, name: string): number {
  const ms = /^[0-9]{1,16}$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new UsageError(`${name} must be an ISO 8601 time or milliseconds since the epoch`);
  }
  return ms;
}

function parse(argv: readonly string[], nowMs: number): ReconcileArgs {
  const values = parseFlags(argv, {
    from: { type: 'string' },
    to: { type: 'string' },
    chain: { type: 'string' },
    concurrency: { type: 'string' },
    json: { type: 'boolean' },
  });
  const from = values['from'];
  if (typeof from !== 'string') throw new UsageError('--from is required');
  const fromMs = parseTime(from, '--from');
  const to = values['to'];
  const toMs = typeof to === 'string' ? parseTime(to, '--to') : nowMs;
  if (toMs <= fromMs) throw new UsageError('--to must be later than --from');
  const chain = values['chain'];
  if (chain !== undefined && chain !== 'solana' && chain !== 'sui') {
    throw new UsageError('--chain must be solana or sui');
  }
  let concurrency = 4;
  const c = values['concurrency'];
  if (typeof c === 'string') {
    if (!/^([1-9]|1[0-6])$/.test(c))
      throw new UsageError('--concurrency must be a whole number from 1 to 16');
    concurrency = Number(c);
  }
  return { fromMs, toMs, chain, concurrency, json: values['json'] === true };
}

/** The chains' own transaction sources (the fetch and normalizer payments are verified with). */
function sources(
  config: Readonly<Config>,
  chain: Chain | undefined,
): Partial<Record<Chain, TransactionSource>> {
  const out: Partial<Record<Chain, TransactionSource>> = {};
  if (config.solanaRpcUrl && chain !== 'sui') {
    out.solana = createSolanaSource({
      rpcUrl: config.solanaRpcUrl,
      network: config.chainNetwork,
      commitment: config.solanaCommitment,
    });
  }
  if (config.suiRpcUrl && chain !== 'solana') {
    out.sui = createSuiSource({ rpcUrl: config.suiRpcUrl, network: config.chainNetwork });
  }
  if (chain && !out[chain]) {
    const name = chain === 'solana' ? 'SOLANA_RPC_URL' : 'SUI_RPC_URL';
    throw new ConfigError(`${name} is not set: cannot re-read ${chain} transactions`);
  }
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The report for a person: the summary per chain, then every mismatch and unchecked item, named. */
export function formatReconcile(r: ReconcileReport, chains: readonly Chain[]): string {
  const lines = [`Reconciliation ${iso(r.fromMs)} .. ${iso(r.toMs)}`];
  for (const chain of chains) {
    const t = r.chains[chain];
    lines.push(
      `${chain}: checked ${t.checked}, ok ${t.ok}, mismatches ${t.mismatches}, unchecked ${t.unchecked}${t.notSent ? `, v2 never sent ${t.notSent}` : ''}`,
    );
  }
  for (const m of r.mismatches) {
    lines.push(`MISMATCH ${m.chain} tx ${m.tx} (${m.kind} ${m.id}):`);
    for (const f of m.findings) lines.push(`  ${f.code}: ${f.message}`);
  }
  for (const u of r.unchecked) lines.push(`UNCHECKED ${u.chain} tx ${u.tx} (${u.kind} ${u.id}): ${u.reason}`);
  lines.push(
    r.ok
      ? 'ledger and chain agree'
      : r.mismatches.length > 0
        ? `${r.mismatches.length} transaction${r.mismatches.length === 1 ? ' does' : 's do'} not match the ledger`
        : `${r.unchecked.length} could not be checked`,
  );
  return `${lines.join('\n')}\n`;
}

export async function reconcileCommand(
  argv: readonly string[],
  env: EnvInput,
  io: CommandIo,
  extra: { now?: () => number; minIntervalMs?: number; retryDelaysMs?: readonly number[] } = {},
): Promise<number> {
  const ready = await prepareCommand({ name: 'reconcile', usage: RECONCILE_USAGE, io }, () => {
    const args = parse(argv, (extra.now ?? Date.now)());
    const config = loadConfig(env, argv);
    return { args, config, chainSources: sources(config, args.chain) };
  });
  if (!ready) return RECONCILE_EXIT.usage;
  const { args, config, chainSources } = ready;
  return withStore(
    config.databaseUrl,
    async (store) => {
      const report = await runReconcile({
        store,
        sources: chainSources,
        assets: USDC_ASSET,
        platform: { solana: platformAddress(config, 'solana'), sui: platformAddress(config, 'sui') },
        fromMs: args.fromMs,
        toMs: args.toMs,
        ...(args.chain ? { chain: args.chain } : {}),
        concurrency: args.concurrency,
        ...(extra.minIntervalMs !== undefined ? { minIntervalMs: extra.minIntervalMs } : {}),
        ...(extra.retryDelaysMs ? { retryDelaysMs: extra.retryDelaysMs } : {}),
      });
      const chains: Chain[] = args.chain ? [args.chain] : ['solana', 'sui'];
      io.out(args.json ? `${JSON.stringify(report, null, 2)}\n` : formatReconcile(report, chains));
      if (report.mismatches.length > 0) {
        for (const m of report.mismatches)
          io.err(`tollgate reconcile: mismatch in ${m.chain} transaction ${m.tx}\n`);
        return RECONCILE_EXIT.mismatch;
      }
      return report.ok ? RECONCILE_EXIT.ok : RECONCILE_EXIT.incomplete;
    },
    (e) => {
      io.err(`tollgate reconcile: could not finish: ${e.message}\n`);
      return RECONCILE_EXIT.incomplete;
    },
  );
}
