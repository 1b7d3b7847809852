/** `tollgate projects create|list|show|delete`. */
import { type CliCommand, optionalString, printJson, requireString, UsageError } from '../command.ts';
import { clientFor } from '../http.ts';

const slugPath = (slug: string) => `/v1/projects/${encodeURIComponent(slug)}`;

const create: CliCommand = {
  name: 'projects create',
  summary: 'create a project (the slug becomes part of every protected URL)',
  usage:
    '--slug <slug> --name <name> [--description <text>] [--category <category>] [--owner-chain sui|solana --owner-address <addr>]',
  details:
    '--owner-* is for the operator (TOLLGATE_TOKEN=<operator token>) creating a project for a provider.',
  options: {
    slug: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    category: { type: 'string' },
    'owner-chain': { type: 'string' },
    'owner-address': { type: 'string' },
  },
  async run(io, values) {
    const body: Record<string, unknown> = {
      slug: requireString(values, 'slug'),
      name: requireString(values, 'name'),
    };
    const description = optionalString(values, 'description');
    const category = optionalString(values, 'category');
    if (description !== undefined) body['description'] = description;
    if (category !== undefined) body['category'] = category;
    const ownerChain = optionalString(values, 'owner-chain');
    const ownerAddress = optionalString(values, 'owner-address');
    if ((ownerChain === undefined) !== (ownerAddress === undefined)) {
      throw new UsageError('--owner-chain and --owner-address go together');
    }
    if (ownerChain && ownerAddress) body['owner'] = { chain: ownerChain, address: ownerAddress };
    printJson(io, await clientFor(io, values).request('POST', '/v1/projects', body));
  },
};

const list: CliCommand = {
  name: 'projects list',
  summary: 'list your projects (all projects with the operator token)',
  usage: '[--gateway <url>]',
  options: {},
  async run(io, values) {
    printJson(io, await clientFor(io, values).request('GET', '/v1/projects'));
  },
};

const show: CliCommand = {
  name: 'projects show',
  summary: 'show one project',
  usage: '--slug <slug>',
  options: { slug: { type: 'string' } },
  async run(io, values) {
    printJson(io, await clientFor(io, values).request('GET', slugPath(requireString(values, 'slug'))));
  },
};

const remove: CliCommand = {
  name: 'projects delete',
  summary: 'delete a project with its APIs, endpoints and rails',
  usage: '--slug <slug>',
  options: { slug: { type: 'string' } },
  async run(io, values) {
    const slug = requireString(values, 'slug');
    await clientFor(io, values).request('DELETE', slugPath(slug));
    io.err(`deleted project ${slug}`);
  },
};

export const commands: CliCommand[] = [create, list, show, remove];
