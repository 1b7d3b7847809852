/** `tollgate endpoints add|list`: priced routes served at {gateway}/p/{slug}/{path}. */
import { readFileSync } from 'node:fs';
import {
  type CliCommand,
  optionalString,
  type ParsedValues,
  printJson,
  requireString,
  UsageError,
} from '../command.ts';
import { clientFor } from '../http.ts';
import { listCommand, projectPath } from '../project-commands.ts';

function readJsonObject(values: ParsedValues, flag: string): Record<string, unknown> | undefined {
  const path = optionalString(values, flag);
  if (path === undefined) return undefined;
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
    const description = optionalString(values, 'description');
    if (description !== undefined) body['description'] = description;
    const timeout = optionalString(values, 'timeout-ms');
    if (timeout !== undefined) {
      if (!/^[0-9]{1,9}$/.test(timeout))
        throw new UsageError('--timeout-ms must be a whole number of milliseconds');
      body['timeoutMs'] = Number(timeout);
    }
    if (values['disabled'] === true) body['enabled'] = false;
    const input = readJsonObject(values, 'input-schema');
    const output = readJsonObject(values, 'output-schema');
    if (input) body['inputSchema'] = input;
    if (output) body['outputSchema'] = output;
    const path = projectPath(requireString(values, 'project'), 'endpoints');
    printJson(io, await clientFor(io, values).request('POST', path, body));
  },
};

export const commands: CliCommand[] = [
  add,
  listCommand('endpoints', "list a project's endpoints with their protected URLs and prices"),
];
