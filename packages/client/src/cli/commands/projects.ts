/** `tollgate projects create|list|show|update|delete`. */
import {
  type CliCommand,
  optionalString,
  type ParsedValues,
  requireString,
  UsageError,
  wantsJson,
} from '../command.ts';
import { clientFor } from '../http.ts';

const slugPath = (slug: string) => `/v1/projects/${encodeURIComponent(slug)}`;

/** `--x402-exact true|false` as a boolean, or undefined when absent. */
function x402Exact(values: ParsedValues): boolean | undefined {
  const v = optionalString(values, 'x402-exact');
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw new UsageError('--x402-exact must be true or false');
  return v === 'true';
}

const create: CliCommand = {
  name: 'projects create',
  summary: 'create a project (the slug becomes part of every protected URL)',
  usage:
    '--slug <slug> --name <name> [--description <text>] [--category <category>] [--x402-exact true|false] [--owner-chain sui|solana --owner-address <addr>]',
  details: [
    '--x402-exact true also offers stock x402 v2 clients the "exact" scheme on this project.',
    '--owner-* is for the operator (TOLLGATE_TOKEN=<operator token>) creating a project for a provider.',
  ].join('\n'),
  options: {
    slug: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    category: { type: 'string' },
    'x402-exact': { type: 'string' },
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
    const exact = x402Exact(values);
    if (exact !== undefined) body['x402Exact'] = exact;
    const ownerChain = optionalString(values, 'owner-chain');
    const ownerAddress = optionalString(values, 'owner-address');
    if ((ownerChain === undefined) !== (ownerAddress === undefined)) {
      throw new UsageError('--owner-chain and --owner-address go together');
    }
    if (ownerChain && ownerAddress) body['owner'] = { chain: ownerChain, address: ownerAddress };
    return clientFor(io, values).request('POST', '/v1/projects', body);
  },
};

const list: CliCommand = {
  name: 'projects list',
  summary: 'list your projects (all projects with the operator token)',
  usage: '[--gateway <url>]',
  options: {},
  async run(io, values) {
    return clientFor(io, values).request('GET', '/v1/projects');
  },
};

const show: CliCommand = {
  name: 'projects show',
  summary: 'show one project',
  usage: '--slug <slug>',
  options: { slug: { type: 'string' } },
  async run(io, values) {
    return clientFor(io, values).request('GET', slugPath(requireString(values, 'slug')));
  },
};

const update: CliCommand = {
  name: 'projects update',
  summary: "change a project's name, description, category or x402 exact opt-in",
  usage:
    '--slug <slug> [--name <name>] [--description <text>] [--category <category>] [--x402-exact true|false]',
  details: 'Only the fields given change (PATCH /v1/projects/{slug}); the slug itself cannot change.',
  options: {
    slug: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    category: { type: 'string' },
    'x402-exact': { type: 'string' },
  },
  async run(io, values) {
    const slug = requireString(values, 'slug');
    const body: Record<string, unknown> = {};
    for (const field of ['name', 'description', 'category'] as const) {
      const v = optionalString(values, field);
      if (v !== undefined) body[field] = v;
    }
    const exact = x402Exact(values);
    if (exact !== undefined) body['x402Exact'] = exact;
    if (Object.keys(body).length === 0) {
      throw new UsageError('nothing to update: give --name, --description, --category or --x402-exact');
    }
    return clientFor(io, values).request('PATCH', slugPath(slug), body);
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
    return wantsJson(values) ? { deleted: { project: slug } } : undefined;
  },
};

export const commands: CliCommand[] = [create, list, show, update, remove];
