/** `tollgate rails set|update|list|delete`: where a project gets paid, per chain. */
import { type CliCommand, type ParsedValues, requireString, UsageError, wantsJson } from '../command.ts';
import { clientFor } from '../http.ts';
import { listCommand, projectPath } from '../project-commands.ts';

function railPath(values: ParsedValues): { project: string; chain: string; path: string } {
  const chain = requireString(values, 'chain');
  if (chain !== 'sui' && chain !== 'solana') throw new UsageError('--chain must be sui or solana');
  const project = requireString(values, 'project');
  return { project, chain, path: `${projectPath(project, 'rails')}/${chain}` };
}

/** `rails set` and its alias `rails update`: one PUT creates or replaces the chain's rail. */
function setCommand(name: 'rails set' | 'rails update', summary: string): CliCommand {
  return {
    name,
    summary,
    usage: '--project <slug> --chain sui|solana --network <network> --recipient <address>',
    details: [
      'The network must be the gateway\'s ("localnet" for a sandbox gateway, "mainnet" in production).',
      'A project has at most one rail per chain: setting it again replaces the recipient (PUT …/rails/{chain}).',
    ].join('\n'),
    options: {
      project: { type: 'string' },
      chain: { type: 'string' },
      network: { type: 'string' },
      recipient: { type: 'string' },
    },
    async run(io, values) {
      const { path } = railPath(values);
      return clientFor(io, values).request('PUT', path, {
        network: requireString(values, 'network'),
        providerRecipient: requireString(values, 'recipient'),
      });
    },
  };
}

const remove: CliCommand = {
  name: 'rails delete',
  summary: 'stop taking payments on one chain for a project',
  usage: '--project <slug> --chain sui|solana',
  options: { project: { type: 'string' }, chain: { type: 'string' } },
  async run(io, values) {
    const { project, chain, path } = railPath(values);
    await clientFor(io, values).request('DELETE', path);
    io.err(`deleted the ${chain} rail of project ${project}`);
    return wantsJson(values) ? { deleted: { project, rail: chain } } : undefined;
  },
};

export const commands: CliCommand[] = [
  setCommand('rails set', 'set the wallet that receives payments on one chain'),
  setCommand('rails update', 'change the wallet that receives payments on one chain (same as `rails set`)'),
  listCommand('rails', "list a project's payment rails"),
  remove,
];
