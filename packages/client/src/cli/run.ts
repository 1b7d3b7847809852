/**
 * Dispatches `tollgate <command> [options]` over the command table. Returns the
 * process exit code: 0 done, 1 failed (gateway error, bad key file…), 2 usage.
 */
import { parseArgs } from 'node:util';
import { type CliCommand, CliError, type CliIo, COMMON_OPTIONS, UsageError } from './command.ts';
import { COMMANDS } from './commands/index.ts';

function commandHelp(c: CliCommand): string {
  const lines = [`tollgate ${c.name} — ${c.summary}`, '', `usage: tollgate ${c.name} ${c.usage}`.trimEnd()];
  if (c.details) lines.push('', c.details);
  lines.push('', 'common options: --gateway <url> (default: $TOLLGATE_GATEWAY, then the last login), --help');
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
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...COMMON_OPTIONS, ...command.options },
      strict: true,
      allowPositionals: command.positionals === true,
    });
  } catch (e) {
    io.err(`tollgate ${command.name}: ${(e as Error).message}\n\n${commandHelp(command)}`);
    return 2;
  }
  if (parsed.values['help']) {
    io.out(commandHelp(command));
    return 0;
  }
  try {
    await command.run(io, parsed.values as Record<string, string | boolean | undefined>, parsed.positionals);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`tollgate ${command.name}: ${e.message}\n\n${commandHelp(command)}`);
      return 2;
    }
    if (e instanceof CliError) {
      io.err(`tollgate ${command.name}: ${e.message}`);
      return 1;
    }
    io.err(`tollgate ${command.name}: ${(e as Error).message ?? String(e)}`);
    return 1;
  }
}
