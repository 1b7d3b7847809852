/**
 * Why the gateway could not start, said the way an operator can act on it: one line
 * per problem naming the variable to fix, no stack trace, and an exit code (sysexits)
 * that says whether to fix the configuration (78) or bring a service up (69). Errors
 * this file does not recognise are bugs, and keep their stack.
 */
import { ConfigError } from '../config.ts';
import { describeDatabase, safeUrl } from '../config-checks.ts';
import { withDeadline } from '../deadline.ts';

export const EXIT = { ok: 0, failed: 1, usage: 64, unavailable: 69, config: 78 } as const;

/** A startup failure caused by the value of one variable (or the service it names). */
export class StartupProblem extends Error {
  override readonly name = 'StartupProblem';
  readonly variable: string;
  readonly exitCode: number;
  constructor(variable: string, message: string, exitCode: number, options?: { cause?: unknown }) {
    super(message, options);
    this.variable = variable;
    this.exitCode = exitCode;
  }
}

interface SystemError {
  code?: unknown;
  errcode?: unknown;
  errors?: unknown;
  path?: unknown;
  message?: unknown;
}

function codeOf(e: unknown): string | undefined {
  const err = e as SystemError | null;
  if (!err || typeof err !== 'object') return undefined;
  if (typeof err.code === 'string') return err.code;
  // Node's happy-eyeballs connect fails with an AggregateError of one error per address.
  if (Array.isArray(err.errors)) return codeOf(err.errors[0]);
  return undefined;
}

const NETWORK_DOWN: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is it running, on that port?)',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EAI_AGAIN: 'name lookup failed for now (DNS)',
};

/** A failure to open DATABASE_URL, without its password. */
export function databaseProblem(databaseUrl: string, e: unknown): StartupProblem {
  if (e instanceof StartupProblem) return e;
  const db = describeDatabase(databaseUrl);
  const where = `${db.backend === 'sqlite' ? 'SQLite' : 'PostgreSQL'} at ${db.location}`;
  const code = codeOf(e);
  const say = (why: string, exit: number) =>
    new StartupProblem('DATABASE_URL', `cannot open ${where}: ${why}`, exit, { cause: e });
  if (code && NETWORK_DOWN[code]) return say(NETWORK_DOWN[code], EXIT.unavailable);
  switch (code) {
    case 'ENOTFOUND':
      return say('the host name does not resolve', EXIT.config);
    case '28P01':
    case '28000':
      return say('authentication failed (user or password)', EXIT.config);
    case '3D000':
      return say('the database does not exist (create it first)', EXIT.config);
    case '42501':
      return say('permission denied (the user may not create tables there)', EXIT.config);
    case '57P03':
      return say('the server is starting up or shutting down; try again', EXIT.unavailable);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
    case 'ENOTDIR':
    case 'ENOENT':
    case 'EISDIR':
      return say(`${code} on ${String((e as SystemError).path ?? 'its directory')}`, EXIT.config);
  }
  const message = scrub(String((e as SystemError)?.message ?? e), databaseUrl);
  // node:sqlite: "unable to open database file" (14), "file is not a database" (26)...
  return say(message.split('\n')[0]!, code === 'ERR_SQLITE_ERROR' ? EXIT.config : EXIT.unavailable);
}

/** A chain node that could not be asked at start (Sui's chain identifier). */
export function chainProblem(variable: string, rpcUrl: string, e: unknown): StartupProblem {
  if (e instanceof StartupProblem) return e;
  const code = codeOf(e) ?? codeOf((e as { cause?: unknown })?.cause);
  const why =
    code && NETWORK_DOWN[code]
      ? NETWORK_DOWN[code]
      : (e as Error)?.name === 'TimeoutError'
        ? 'no answer in time'
        : scrub(String((e as Error)?.message ?? e), rpcUrl).split('\n')[0]!;
  return new StartupProblem(
    variable,
    `cannot reach the node at ${safeUrl(rpcUrl)}: ${why}`,
    EXIT.unavailable,
    {
      cause: e,
    },
  );
}

/** `listen` failed: the message names HOST or PORT. */
export function listenProblem(host: string, port: number, e: unknown): StartupProblem {
  const code = codeOf(e);
  const say = (variable: string, message: string) =>
    new StartupProblem(variable, message, EXIT.config, { cause: e });
  switch (code) {
    case 'EADDRINUSE':
      return say(
        'PORT',
        `${port} is already in use on ${host} (another gateway running?); choose another PORT`,
      );
    case 'EACCES':
      return say('PORT', `${port} needs privileges on this machine; use a PORT of 1024 or more`);
    case 'EADDRNOTAVAIL':
      return say('HOST', `${host} is not an address of this machine`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return say('HOST', `${host} does not resolve to an address`);
  }
  return say(
    'HOST',
    `cannot listen on ${host}:${port}: ${String((e as Error)?.message ?? e).split('\n')[0]}`,
  );
}

/** A file system error while sandbox mode sets up its data directory. */
export function dataDirProblem(dataDir: string, e: unknown): StartupProblem | null {
  const err = e as SystemError;
  const code = codeOf(e);
  if (!code || typeof err?.path !== 'string' || !/^E[A-Z]+$/.test(code)) return null;
  return new StartupProblem(
    'TOLLGATE_DATA_DIR',
    `sandbox mode cannot write its files in ${dataDir}: ${code} on ${err.path}`,
    EXIT.config,
    { cause: e },
  );
}

/** How long opening the database may take at start (PostgreSQL on a host that never answers). */
const DATABASE_DEADLINE_MS = 30_000;

/** Opening DATABASE_URL at start: any failure, or no answer in time, names DATABASE_URL. */
export function openingDatabase<T>(databaseUrl: string, step: Promise<T>): Promise<T> {
  const timeout = () => {
    const db = describeDatabase(databaseUrl);
    return new StartupProblem(
      'DATABASE_URL',
      `cannot open ${db.backend === 'sqlite' ? 'SQLite' : 'PostgreSQL'} at ${db.location}: no answer within ${DATABASE_DEADLINE_MS / 1000} s`,
      EXIT.unavailable,
    );
  };
  return withDeadline(DATABASE_DEADLINE_MS, () => step, { race: true, onTimeout: timeout }).catch(
    (e: unknown) => {
      throw databaseProblem(databaseUrl, e);
    },
  );
}

/** A call to a chain node at start: a failure names the variable of its URL. */
export function askingChain<T>(variable: string, rpcUrl: string, step: Promise<T>): Promise<T> {
  return step.catch((e: unknown) => {
    throw chainProblem(variable, rpcUrl, e);
  });
}

/** The text to print and the exit code for a startup failure, or null for a bug (print its stack). */
export function explainStartupError(e: unknown): { text: string; exitCode: number } | null {
  if (e instanceof ConfigError) {
    const n = e.problems.length;
    return {
      text: [
        `tollgate: invalid configuration (${n} problem${n === 1 ? '' : 's'}):`,
        ...e.problems.map((p) => `  ${p}`),
        'Set them in the environment or the --config file (docs/configuration.md lists every variable); ' +
          '`npm run config:check` checks a configuration without starting.',
      ].join('\n'),
      exitCode: EXIT.config,
    };
  }
  const problem = known(e);
  if (!problem) return null;
  return {
    text: `tollgate: cannot start:\n  ${problem.variable}: ${problem.message}`,
    exitCode: problem.exitCode,
  };
}

function known(e: unknown): StartupProblem | null {
  if (e instanceof StartupProblem) return e;
  const name = (e as Error)?.name;
  const message = String((e as Error)?.message ?? '').split('\n');
  // Thrown by modules that name their own variable: the models catalogue, the sponsor key.
  if (name === 'CatalogueError')
    return new StartupProblem('TOLLGATE_MODELS_FILE', message.join(' '), EXIT.config, { cause: e });
  if (name === 'PlatformKeyError')
    return new StartupProblem('TOLLGATE_SOLANA_SPONSOR_KEY', message[0]!, EXIT.config, { cause: e });
  return null;
}

/** Removes a URL's password (and the URL itself) from an error message. */
function scrub(message: string, url: string): string {
  let out = message.split(url).join(safeUrl(url) ?? '[url]');
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password) out = out.split(password).join('***');
  } catch {
    // not a URL: nothing more to hide
  }
  return out;
}
