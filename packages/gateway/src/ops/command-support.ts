/**
 * What the operator commands (payout, reconcile, refund) share: reading their flags,
 * reporting bad usage or configuration the same way (exit 2), running against the
 * gateway's database, and printing tables and USDC amounts. Kept free of chain modules
 * so each command still loads only what it runs (cli.ts).
 */
import { parseArgs } from 'node:util';
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import { ConfigError } from '../config.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';

export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

/** Exit status of every operator command for bad usage or configuration. */
export const USAGE_EXIT = 2;

/** Bad flags; an empty message asks for the usage line alone (--help). */
export class UsageError extends Error {}

type Options = Record<string, { type: 'string' | 'boolean' }>;

/** The command's flags plus --config (read by loadConfig from the same argv) and --help. */
export function parseFlags(
  argv: readonly string[],
  options: Options,
): Record<string, string | boolean | undefined> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        ...options,
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values['help']) throw new UsageError('');
  return values;
}

/**
 * Runs `setup` (flags, configuration, whatever else must be right before any work); on a
 * UsageError, a ConfigError or one of `configErrors`, says why (with the usage line for
 * bad usage) and returns null: the command then exits with USAGE_EXIT.
 */
export async function prepareCommand<T>(
  command: { name: string; usage: string; io: CommandIo },
  setup: () => T | Promise<T>,
  configErrors: readonly (abstract new (...args: never[]) => Error)[] = [],
): Promise<T | null> {
  const { name, usage, io } = command;
  try {
    return await setup();
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`${e.message ? `tollgate ${name}: ${e.message}\n` : ''}${usage}\n`);
      return null;
    }
    if (e instanceof ConfigError || configErrors.some((c) => e instanceof c)) {
      io.err(`tollgate ${name}: ${(e as Error).message}\n`);
      return null;
    }
    throw e;
  }
}

/** Runs `work` against the gateway's database, closing it afterwards; an error thrown becomes `failed`'s exit status. */
export async function withStore(
  databaseUrl: string,
  work: (store: Store) => Promise<number>,
  failed: (e: Error) => number,
): Promise<number> {
  const store = await openStore(databaseUrl);
  try {
    return await work(store);
  } catch (e) {
    return failed(e as Error);
  } finally {
    await store.close();
  }
}

export const usdc = (a: bigint) => formatAmount(a, USDC_DECIMALS);

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}
