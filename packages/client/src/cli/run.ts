/**
 * Dispatches `tollgate <command> [options]` over the command table. Returns the
 * process exit code: 0 done, 1 failed (gateway error, bad key file…), 2 usage.
 * Failures are one line on stderr, `tollgate: <message>` (a gateway's as
 * `code (reason): message`), never a stack trace; with `--json` also a JSON
 * document on stdout: `{ error, reason?, message, status? }`.
 */
import { parseArgs } from 'node:util';
import { ProtocolError } from '@tollgate/protocol';
import { SignInError } from '../sign-in.ts';
import {
  type CliCommand,
  type CliIo,
  COMMON_OPTIONS,
  type ParsedValues,
  printJson,
  UsageError,
  wantsJson,
} from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { GatewayError } from './http.ts';

function commandHelp(c: CliCommand): string {
  const lines = [`tollgate ${c.name} — ${c.summary}`, '', `usage: tollgate ${c.name} ${c.usage}`.trimEnd()];
  if (c.details) lines.push('', c.details);
  lines.push(
    '',
    'common options: --gateway <url> (default: $TOLLGATE_GATEWAY, then the last login), --json (the result,',
    'or the error, as JSON on stdout), --help',
  );
  return lines.join('\n');
}

function overview(commands: readonly CliCommand[], prefix?: string): string {
  const shown = prefix ? commands.filter((c) => c.name.split(' ')[0] === prefix) : commands;
  const width = Math.max(...shown.map((c) => c.name.length));
  return [
    'usage: tollgate <command> [options]',
    '',
    'commands:',
    ...shown.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `tollgate <command> --help` for its options. Environment: TOLLGATE_GATEWAY, TOLLGATE_TOKEN',
    '(bearer token to use instead of the stored login, e.g. the operator token), TOLLGATE_CONFIG_DIR.',
  ].join('\n');
}

/** The command named by the first one or two words of argv (longest match). */
function findCommand(
  commands: readonly CliCommand[],
  argv: string[],
): { command: CliCommand; rest: string[] } | null {
  const two = `${argv[0]} ${argv[1]}`;
  const byTwo = commands.find((c) => c.name === two);
  if (byTwo) return { command: byTwo, rest: argv.slice(2) };
  const byOne = commands.find((c) => c.name === argv[0]);
  return byOne ? { command: byOne, rest: argv.slice(1) } : null;
}

/** What went wrong, for people (one line) and for `--json` (the gateway's error shape). */
export function describeError(e: unknown): { line: string; json: Record<string, unknown> } {
  if (e instanceof GatewayError) {
    return {
      line: e.message,
      json: {
        error: e.code,
        ...(e.reason ? { reason: e.reason } : {}),
        message: e.gatewayMessage,
        status: e.status,
      },
    };
  }
  if (e instanceof SignInError) {
    return {
      line: e.message,
      json: {
        error: e.code,
        ...(e.reason ? { reason: e.reason } : {}),
        message: e.message,
        ...(e.status !== undefined ? { status: e.status } : {}),
      },
    };
  }
  if (e instanceof ProtocolError) {
    return { line: `${e.message} (${e.code})`, json: { error: e.code, message: e.message } };
  }
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? e.cause.message : undefined;
    const message = cause && !e.message.includes(cause) ? `${e.message}: ${cause}` : e.message;
    return { line: message, json: { error: 'failed', message } };
  }
  return { line: String(e), json: { error: 'failed', message: String(e) } };
}

export async function runCli(
  argv: string[],
  io: CliIo,
  commands: readonly CliCommand[] = COMMANDS,
): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.out(overview(commands));
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(commands, argv);
  if (!found) {
    const group = commands.some((c) => c.name.split(' ')[0] === argv[0]);
    const asksHelp = argv.includes('--help') || argv.includes('-h');
    if (group) {
      io[asksHelp ? 'out' : 'err'](overview(commands, argv[0]));
      return asksHelp ? 0 : 2;
    }
    io.err(`tollgate: unknown command "${argv[0]}"\n\n${overview(commands)}`);
    return 2;
  }
  const { command, rest } = found;
  // Whether stdout got anything: a --json failure prints its JSON only when nothing else was.
  let printed = false;
  const cmdIo: CliIo = {
    ...io,
    out(text) {
      printed = true;
      io.out(text);
    },
  };
  const usage = (message: string, json: boolean): number => {
    io.err(`tollgate: ${message}\n\n${commandHelp(command)}`);
    if (json) printJson(io, { error: 'usage', message });
    return 2;
  };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...COMMON_OPTIONS, ...command.options },
      strict: true,
      allowPositionals: command.positionals === true,
    });
  } catch (e) {
    return usage((e as Error).message, rest.includes('--json'));
  }
  const values = parsed.values as ParsedValues;
  if (values['help']) {
    io.out(commandHelp(command));
    return 0;
  }
  const json = wantsJson(values);
  try {
    const result = await command.run(cmdIo, values, parsed.positionals);
    if (result !== undefined) printJson(cmdIo, result);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) return usage(e.message, json);
    const { line, json: body } = describeError(e);
    io.err(`tollgate: ${line}`);
    if (json && !printed) printJson(io, body);
    return 1;
  }
}
