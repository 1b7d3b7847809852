/**
 * The CLI's command table. Each command group lives in `commands/<group>.ts`
 * and exports its commands; `commands/index.ts` lists the groups, so adding a
 * command is one file plus one line there.
 */
import type { ParseArgsOptionsConfig } from 'node:util';

export interface CliIo {
  env: Record<string, string | undefined>;
  /** Results (JSON) for scripts. */
  out(text: string): void;
  /** Progress and errors for people. */
  err(text: string): void;
  /** Reads a secret the user pipes in (`--auth-secret-file -`). */
  readStdin?(): Promise<string>;
}

export type ParsedValues = Record<string, string | boolean | undefined>;

export interface CliCommand {
  /** One or two words: "login", "projects create". */
  name: string;
  summary: string;
  /** Usage line(s) after `tollgate <name>`, e.g. "--chain sui|solana --key <file>". */
  usage: string;
  /** Extra help text (examples, notes). */
  details?: string;
  options: ParseArgsOptionsConfig;
  /** Whether the command takes positional arguments (e.g. a URL). */
  positionals?: boolean;
  /**
   * Does the work. A returned value is the command's result, printed as JSON on stdout;
   * commands that print text instead return their result only when `--json` is set
   * (see `wantsJson`).
   */
  run(io: CliIo, values: ParsedValues, positionals: string[]): Promise<unknown>;
}

/** A mistake in how the CLI was called: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A failure to report to the user without a stack trace, exit code 1. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

export function requireString(values: ParsedValues, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function optionalString(values: ParsedValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** Options every command accepts. */
export const COMMON_OPTIONS: ParseArgsOptionsConfig = {
  gateway: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

/** `--json`: the result (or the error) as one JSON document on stdout, whatever the command. */
export function wantsJson(values: ParsedValues): boolean {
  return values['json'] === true;
}

/** Prints a result for scripts: indented JSON on stdout. */
export function printJson(io: Pick<CliIo, 'out'>, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}
