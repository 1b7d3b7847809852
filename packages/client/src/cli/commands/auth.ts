/** `tollgate login`, `logout`, `whoami`: wallet sign-in against a gateway. */
import { signIn } from '../../sign-in.ts';
import { type CliCommand, optionalString, requireString, UsageError, wantsJson } from '../command.ts';
import { normalizeGateway, readCredentials, resolveGateway, writeCredentials } from '../credentials.ts';
import { clientFor, GatewayError, gatewayClient } from '../http.ts';
import { loadSignInKey } from '../keys.ts';

const login: CliCommand = {
  name: 'login',
  summary: 'sign in with a wallet key file and store an access token',
  usage: '--chain sui|solana --key <keyfile> [--address <addr>] [--gateway <url>]',
  details: [
    'Key files: Solana CLI JSON (64-byte array, e.g. ~/.config/solana/id.json);',
    'Sui: a suiprivkey1… line or ~/.sui/sui_config/sui.keystore (use --address to pick a key).',
    'The token is stored in $TOLLGATE_CONFIG_DIR/credentials.json (default ~/.config/tollgate/), mode 0600.',
  ].join('\n'),
  options: { chain: { type: 'string' }, key: { type: 'string' }, address: { type: 'string' } },
  async run(io, values) {
    const chain = requireString(values, 'chain');
    if (chain !== 'sui' && chain !== 'solana') throw new UsageError('--chain must be sui or solana');
    // Refuses plain http off loopback before the key is even read.
    const client = clientFor(io, values, { auth: false });
    const key = await loadSignInKey(chain, requireString(values, 'key'), optionalString(values, 'address'));
    const session = await signIn(client.gateway, key);
    const file = readCredentials(io.env);
    file.gateways[client.gateway] = {
      accessToken: session.accessToken,
      expiresAt: session.expiresAt,
      owner: session.owner,
    };
    file.defaultGateway = client.gateway;
    writeCredentials(io.env, file);
    io.err(
      `logged in to ${client.gateway} as ${session.owner.chain}:${session.owner.address} until ${session.expiresAt}`,
    );
    return { gateway: client.gateway, owner: session.owner, expiresAt: session.expiresAt };
  },
};

const logout: CliCommand = {
  name: 'logout',
  summary: 'revoke the stored access token and forget it',
  usage: '[--gateway <url>]',
  options: {},
  async run(io, values) {
    const gateway = resolveGateway(io.env, optionalString(values, 'gateway'));
    const file = readCredentials(io.env);
    const stored = file.gateways[gateway];
    if (!stored) {
      io.err(`not logged in to ${gateway}`);
      return wantsJson(values) ? { gateway, loggedOut: false } : undefined;
    }
    try {
      await gatewayClient({ ...io.env, TOLLGATE_TOKEN: stored.accessToken }, gateway).request(
        'POST',
        '/v1/auth/logout',
      );
    } catch (e) {
      // 401: the token had already expired or been revoked, which is what logout wants.
      if (!(e instanceof GatewayError && e.status === 401)) throw e;
    } finally {
      // Forget the token even if the gateway is unreachable: it expires on its own.
      delete file.gateways[gateway];
      if (file.defaultGateway === normalizeGateway(gateway)) delete file.defaultGateway;
      writeCredentials(io.env, file);
    }
    io.err(`logged out of ${gateway}`);
    return wantsJson(values) ? { gateway, loggedOut: true } : undefined;
  },
};

const whoami: CliCommand = {
  name: 'whoami',
  summary: 'show who the gateway thinks you are',
  usage: '[--gateway <url>]',
  options: {},
  async run(io, values) {
    return clientFor(io, values).request('GET', '/v1/auth/session');
  },
};

export const commands: CliCommand[] = [login, logout, whoami];
