/** `tollgate endpoints add|list|show|update|delete`: priced routes served at {gateway}/p/{slug}/{path}. */
import { readFileSync } from 'node:fs';
import { type CliCommand, optionalString, type ParsedValues, requireString, UsageError } from '../command.ts';
import { clientFor } from '../http.ts';
import { deleteCommand, itemPath, listCommand, projectPath, showCommand } from '../project-commands.ts';

/** A JSON-object file named by `--<flag>`; `none` means null (update: remove the schema). */
function readJsonObject(values: ParsedValues, flag: string): Record<string, unknown> | null | undefined {
  const path = optionalString(values, flag);
  if (path === undefined) return undefined;
  if (path === 'none') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UsageError(`--${flag} ${path}: ${(e as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`--${flag} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/** The fields add and update share, as far as they are given. */
function optionalFields(values: ParsedValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const description = optionalString(values, 'description');
  if (description !== undefined) body['description'] = description;
  const timeout = optionalString(values, 'timeout-ms');
  if (timeout !== undefined) {
    if (!/^[0-9]{1,9}$/.test(timeout))
      throw new UsageError('--timeout-ms must be a whole number of milliseconds');
    body['timeoutMs'] = Number(timeout);
  }
  if (values['enabled'] === true && values['disabled'] === true) {
    throw new UsageError('--enabled and --disabled conflict');
  }
  if (values['disabled'] === true) body['enabled'] = false;
  if (values['enabled'] === true) body['enabled'] = true;
  const input = readJsonObject(values, 'input-schema');
  const output = readJsonObject(values, 'output-schema');
  if (input !== undefined) body['inputSchema'] = input;
  if (output !== undefined) body['outputSchema'] = output;
  return body;
}

const add: CliCommand = {
  name: 'endpoints add',
  summary: 'add a priced endpoint to a project',
  usage:
    '--project <slug> --api <apiId> --method GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS --path <path> --price <usdc> [--description <text>] [--timeout-ms <n>] [--disabled] [--input-schema <file.json>] [--output-schema <file.json>]',
  details:
    'The price is in whole USDC ("0.01"); the platform fee is added on top and shown as fee and total.',
  options: {
    project: { type: 'string' },
    api: { type: 'string' },
    method: { type: 'string' },
    path: { type: 'string' },
    price: { type: 'string' },
    description: { type: 'string' },
    'timeout-ms': { type: 'string' },
    disabled: { type: 'boolean' },
    'input-schema': { type: 'string' },
    'output-schema': { type: 'string' },
  },
  async run(io, values) {
    const body: Record<string, unknown> = {
      apiId: requireString(values, 'api'),
      method: requireString(values, 'method').toUpperCase(),
      path: requireString(values, 'path'),
      price: requireString(values, 'price'),
    };
    Object.assign(body, optionalFields(values));
    if (body['inputSchema'] === null) delete body['inputSchema'];
    if (body['outputSchema'] === null) delete body['outputSchema'];
    const path = projectPath(requireString(values, 'project'), 'endpoints');
    return clientFor(io, values).request('POST', path, body);
  },
};

const update: CliCommand = {
  name: 'endpoints update',
  summary: "change an endpoint's price, path, method, API, description, timeout, schemas or whether it is on",
  usage:
    '--project <slug> --id <endpointId> [--price <usdc>] [--method <M>] [--path <path>] [--api <apiId>] [--description <text>] [--timeout-ms <n>] [--enabled|--disabled] [--input-schema <file.json>|none] [--output-schema <file.json>|none]',
  details: [
    'Only the fields given change (PATCH …/endpoints/{id}). A schema of "none" removes it.',
    'A new price applies to quotes issued from now on.',
  ].join('\n'),
  options: {
    project: { type: 'string' },
    id: { type: 'string' },
    api: { type: 'string' },
    method: { type: 'string' },
    path: { type: 'string' },
    price: { type: 'string' },
    description: { type: 'string' },
    'timeout-ms': { type: 'string' },
    enabled: { type: 'boolean' },
    disabled: { type: 'boolean' },
    'input-schema': { type: 'string' },
    'output-schema': { type: 'string' },
  },
  async run(io, values) {
    const path = itemPath(values, 'endpoints');
    const body: Record<string, unknown> = {};
    const apiId = optionalString(values, 'api');
    const method = optionalString(values, 'method');
    const routePath = optionalString(values, 'path');
    const price = optionalString(values, 'price');
    if (apiId !== undefined) body['apiId'] = apiId;
    if (method !== undefined) body['method'] = method.toUpperCase();
    if (routePath !== undefined) body['path'] = routePath;
    if (price !== undefined) body['price'] = price;
    Object.assign(body, optionalFields(values));
    if (Object.keys(body).length === 0) throw new UsageError('nothing to update: give at least one field');
    return clientFor(io, values).request('PATCH', path, body);
  },
};

export const commands: CliCommand[] = [
  add,
  listCommand('endpoints', "list a project's endpoints with their protected URLs and prices"),
  showCommand('endpoints', 'show one endpoint with its protected URL and price'),
  update,
  deleteCommand('endpoints', 'delete an endpoint'),
];
