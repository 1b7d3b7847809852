/**
 * `tollgate console`: opens the gateway's provider console (/console) already signed in.
 * The session token travels in the URL fragment (`#token=…`), which browsers never send
 * to a server; the page stores it for the tab and removes it from the address bar.
 */
import { spawn } from 'node:child_process';
import { signIn } from '../../sign-in.ts';
import {
  type CliCommand,
  CliError,
  type CliIo,
  optionalString,
  type ParsedValues,
  UsageError,
  wantsJson,
} from '../command.ts';
import { readCredentials } from '../credentials.ts';
import { clientFor, gatewayClient } from '../http.ts';
import { loadSignInKey } from '../keys.ts';

/** Asks the desktop to open `url`; a machine without one (a server, CI) just keeps the printed URL. */
function openInBrowser(url: string): void {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args as string[], { detached: true, stdio: 'ignore' });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener: the URL is printed.
  }
}

interface Handover {
  token: string;
  owner: unknown;
  expiresAt?: string;
}

/** A fresh session from --chain/--key, else $TOLLGATE_TOKEN or the stored login (checked first). */
async function sessionFor(io: CliIo, values: ParsedValues, gateway: string): Promise<Handover> {
  const keyPath = optionalString(values, 'key');
  if (keyPath !== undefined) {
    const chain = optionalString(values, 'chain');
    if (chain !== 'sui' && chain !== 'solana')
      throw new UsageError('--chain sui|solana is required with --key');
    const key = await loadSignInKey(chain, keyPath, optionalString(values, 'address'));
    const session = await signIn(gateway, key);
    return { token: session.accessToken, owner: session.owner, expiresAt: session.expiresAt };
  }
  const stored = readCredentials(io.env).gateways[gateway];
  const token = io.env['TOLLGATE_TOKEN'] || stored?.accessToken;
  if (!token) {
    throw new CliError(
      `not logged in to ${gateway}: run \`tollgate login\` first, or pass --chain and --key to sign in for the console`,
    );
  }
  // A dead token would open a console that asks to sign in again: say so here instead.
  const who = await gatewayClient({ ...io.env, TOLLGATE_TOKEN: token }, gateway).request<{
    kind: string;
    owner?: unknown;
  }>('GET', '/v1/auth/session');
  return {
    token,
    owner: who.kind === 'operator' ? 'operator' : who.owner,
    ...(!io.env['TOLLGATE_TOKEN'] && stored ? { expiresAt: stored.expiresAt } : {}),
  };
}

const consoleCommand: CliCommand = {
  name: 'console',
  summary: 'open the provider console in your browser, signed in',
  usage: '[--chain sui|solana --key <keyfile> [--address <addr>]] [--print] [--gateway <url>]',
  details: [
    'With --chain and --key it signs in with that wallet key file (as `tollgate login` does) and hands',
    "the console a session of its own; without them it hands over your login's token ($TOLLGATE_TOKEN",
    'or the stored login), and signing out in the console then logs the CLI out too.',
    'Prints <gateway>/console#token=<token> and opens it with xdg-open/open; --print only prints it.',
    'The URL holds a bearer token: do not paste it where others can read it.',
  ].join('\n'),
  options: {
    chain: { type: 'string' },
    key: { type: 'string' },
    address: { type: 'string' },
    print: { type: 'boolean' },
  },
  async run(io, values) {
    // Refuses plain http off loopback before anything is signed or sent.
    const { gateway } = clientFor(io, values, { auth: false });
    const session = await sessionFor(io, values, gateway);
    const url = `${gateway}/console#token=${encodeURIComponent(session.token)}`;
    if (values['print'] !== true) openInBrowser(url);
    if (wantsJson(values)) return { url, owner: session.owner, expiresAt: session.expiresAt ?? null };
    io.out(url);
    return undefined;
  },
};

export const commands: CliCommand[] = [consoleCommand];
