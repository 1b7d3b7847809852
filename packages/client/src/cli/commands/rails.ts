/** `tollgate rails set|list`: where a project gets paid, per chain. */
import { type CliCommand, printJson, requireString, UsageError } from '../command.ts';
import { clientFor } from '../http.ts';
import { listCommand, projectPath } from '../project-commands.ts';

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
    const path = `${projectPath(requireString(values, 'project'), 'rails')}/${chain}`;
    const rail = await clientFor(io, values).request('PUT', path, {
      network: requireString(values, 'network'),
      providerRecipient: requireString(values, 'recipient'),
    });
    printJson(io, rail);
  },
};

export const commands: CliCommand[] = [set, listCommand('rails', "list a project's payment rails")];
