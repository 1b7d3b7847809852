/** `tollgate rails set|list`: where a project gets paid, per chain. */
import { type CliCommand, type CliIo, optionalString, requireString, UsageError } from '../command.ts';
import { gatewayClient } from '../http.ts';

const print = (io: CliIo, v: unknown) => io.out(JSON.stringify(v, null, 2));
const railsPath = (slug: string) => `/v1/projects/${encodeURIComponent(slug)}/rails`;

const set: CliCommand = {
  name: 'rails set',
  summary: 'set the wallet that receives payments on one chain',
  usage: '--project <slug> --chain sui|solana --network <network> --recipient <address>',
  details: 'The network must be the gateway\'s ("localnet" for a sandbox gateway, "mainnet" in production).',
  options: {
    project: { type: 'string' },
    chain: { type: 'string' },
    network: { type: 'string' },
    recipient: { type: 'string' },
  },
  async run(io, values) {
    const chain = requireString(values, 'chain');
    if (chain !== 'sui' && chain !== 'solana') throw new UsageError('--chain must be sui or solana');
    const client = gatewayClient(io.env, optionalString(values, 'gateway'));
    const rail = await client.request('PUT', `${railsPath(requireString(values, 'project'))}/${chain}`, {
      network: requireString(values, 'network'),
      providerRecipient: requireString(values, 'recipient'),
    });
    print(io, rail);
  },
};

const list: CliCommand = {
  name: 'rails list',
  summary: "list a project's payment rails",
  usage: '--project <slug>',
  options: { project: { type: 'string' } },
  async run(io, values) {
    const client = gatewayClient(io.env, optionalString(values, 'gateway'));
    print(io, await client.request('GET', railsPath(requireString(values, 'project'))));
  },
};

export const commands: CliCommand[] = [set, list];
