/**
 * `npm run payout -- --chain solana|sui [--dry-run] [--max-recipients N] [--json] [--config file]`:
 * reads the gateway's configuration as `npm start` does, opens its database, loads the
 * platform key, runs the payout and prints what it paid. Exit status: 0 done (also
 * when nothing was due), 1 something was not paid (see the errors), 2 bad usage or
 * configuration, 3 another payout run holds the lock.
 */
import { type Config, type EnvInput, loadConfig } from '../config.ts';
import type { Chain } from '../store/store.ts';
import {
  type CommandIo,
  parseFlags,
  prepareCommand,
  table,
  USAGE_EXIT,
  UsageError,
  usdc,
  withStore,
} from './command-support.ts';
import { type PayoutReport, runPayout } from './payout.ts';
import type { PayoutChain } from './payout-chain.ts';
import { solanaPayoutChain } from './payout-solana.ts';
import { suiPayoutChain } from './payout-sui.ts';
import { loadPlatformKey, PlatformKeyError } from './platform-keys.ts';

export const PAYOUT_USAGE =
  'usage: npm run payout -- --chain solana|sui [--dry-run] [--max-recipients N] [--json] [--config <file>]';

export const EXIT = { ok: 0, failed: 1, usage: USAGE_EXIT, busy: 3 } as const;

interface PayoutArgs {
  chain: Chain;
  dryRun: boolean;
  maxRecipients: number | undefined;
  json: boolean;
}

function parse(argv: readonly string[]): PayoutArgs {
  const values = parseFlags(argv, {
    chain: { type: 'string' },
    'dry-run': { type: 'boolean' },
    'max-recipients': { type: 'string' },
    json: { type: 'boolean' },
  });
  const chain = values['chain'];
  if (chain !== 'solana' && chain !== 'sui') throw new UsageError('--chain must be solana or sui');
  let maxRecipients: number | undefined;
  const max = values['max-recipients'];
  if (typeof max === 'string') {
    if (!/^[1-9][0-9]{0,6}$/.test(max))
      throw new UsageError('--max-recipients must be a whole number from 1');
    maxRecipients = Number(max);
  }
  return { chain, dryRun: values['dry-run'] === true, maxRecipients, json: values['json'] === true };
}

/** The platform wallet of a chain, its key checked against the platform address (also for refunds). */
export async function openChain(config: Readonly<Config>, chain: Chain): Promise<PayoutChain> {
  const rpcUrl = chain === 'solana' ? config.solanaRpcUrl : config.suiRpcUrl;
  if (!rpcUrl) {
    const name = chain === 'solana' ? 'SOLANA_RPC_URL' : 'SUI_RPC_URL';
    throw new PlatformKeyError(
      `${name} is not set${config.sandbox ? ` (in sandbox mode: the ${chain === 'solana' ? 'Solana sandbox RPC' : 'Sui sandbox gRPC'} URL the running gateway printed)` : ''}`,
    );
  }
  const key = await loadPlatformKey(config, chain);
  return key.chain === 'solana'
    ? solanaPayoutChain({ key, rpcUrl, commitment: config.solanaCommitment })
    : suiPayoutChain({ key, rpcUrl, network: config.chainNetwork });
}

/** The report for a person: one row per recipient, then a summary line and the errors. */
export function formatReport(r: PayoutReport): string {
  const head = `${r.dryRun ? 'Payout plan (dry run)' : 'Payout'} on ${r.chain} (${r.network}) from ${r.platform}`;
  if (r.lines.length === 0)
    return `${head}\nnothing to pay\n${r.errors.map((e) => `error: ${e}\n`).join('')}`;
  const rows = [
    ['recipient', 'amount (USDC)', 'payables', 'tx', 'state'],
    ...r.lines.map((l) => [
      l.recipient,
      usdc(l.amount),
      String(l.count),
      l.tx ?? '-',
      `${l.state}${l.recovered ? ' (earlier run)' : ''}${l.reason ? `: ${l.reason}` : ''}`,
    ]),
  ];
  const summary = r.dryRun
    ? `would pay ${usdc(r.lines.filter((l) => l.state === 'planned').reduce((s, l) => s + l.amount, 0n))} USDC`
    : `paid ${usdc(r.totalPaid)} USDC in ${r.transactions.length} transaction${r.transactions.length === 1 ? '' : 's'}`;
  return [head, ...table(rows), summary, ...r.errors.map((e) => `error: ${e}`), ''].join('\n');
}

/** The report as JSON: amounts as decimal USDC strings and atomic-unit strings. */
export function reportJson(r: PayoutReport): string {
  return JSON.stringify(
    {
      ...r,
      totalPaid: usdc(r.totalPaid),
      totalPaidAtomic: r.totalPaid.toString(),
      lines: r.lines.map((l) => ({ ...l, amount: usdc(l.amount), amountAtomic: l.amount.toString() })),
    },
    null,
    2,
  );
}

export async function payoutCommand(
  argv: readonly string[],
  env: EnvInput,
  io: CommandIo,
  extra: { now?: () => number; confirmTimeoutMs?: number; pollMs?: number } = {},
): Promise<number> {
  const ready = await prepareCommand({ name: 'payout', usage: PAYOUT_USAGE, io }, async () => {
    const args = parse(argv);
    const config = loadConfig(env, argv);
    return { args, config, chain: await openChain(config, args.chain) };
  }, [PlatformKeyError]);
  if (!ready) return EXIT.usage;
  const { args, config, chain } = ready;
  return withStore(
    config.databaseUrl,
    async (store) => {
      const report = await runPayout({
        store,
        chain,
        network: config.chainNetwork,
        dryRun: args.dryRun,
        ...(args.maxRecipients !== undefined ? { maxRecipients: args.maxRecipients } : {}),
        ...extra,
        log: (line) => io.err(`${line}\n`),
      });
      io.out(args.json ? `${reportJson(report)}\n` : formatReport(report));
      if (report.busy) return EXIT.busy;
      return report.ok ? EXIT.ok : EXIT.failed;
    },
    (e) => {
      io.err(`tollgate payout: ${e.message}\n`);
      return EXIT.failed;
    },
  );
}
