/** `tollgate apis add|list|show|update|delete`: the origins a project forwards to. */
import { readFileSync } from 'node:fs';
import {
  type CliCommand,
  type CliIo,
  optionalString,
  type ParsedValues,
  requireString,
  UsageError,
} from '../command.ts';
import { clientFor } from '../http.ts';
import { deleteCommand, itemPath, listCommand, projectPath, showCommand } from '../project-commands.ts';

/** The origin secret, from an environment variable or a file, never from argv (visible in `ps`). */
async function readSecret(io: CliIo, values: ParsedValues): Promise<string> {
  const envName = optionalString(values, 'auth-secret-env');
  const file = optionalString(values, 'auth-secret-file');
  if ((envName === undefined) === (file === undefined)) {
    throw new UsageError(
      '--auth-type needs exactly one of --auth-secret-env <VAR> or --auth-secret-file <path|->',
    );
  }
  if (envName !== undefined) {
    const v = io.env[envName];
    if (!v) throw new UsageError(`environment variable ${envName} is empty or not set`);
    return v;
  }
  const text = file === '-' ? await (io.readStdin?.() ?? Promise.resolve('')) : readFileSync(file!, 'utf8');
  const secret = text.replace(/\r?\n$/, '');
  if (!secret) throw new UsageError('the origin secret is empty');
  return secret;
}

/** `--auth-type` with its name and secret as the API's `auth` object, or undefined when absent. */
async function originAuth(io: CliIo, values: ParsedValues): Promise<Record<string, string> | undefined> {
  const type = optionalString(values, 'auth-type');
  if (type === undefined) {
    if (
      values['auth-name'] !== undefined ||
      values['auth-secret-env'] !== undefined ||
      values['auth-secret-file'] !== undefined
    ) {
      throw new UsageError('--auth-name and --auth-secret-* need --auth-type');
    }
    return undefined;
  }
  if (!['bearer', 'header', 'query'].includes(type))
    throw new UsageError('--auth-type must be bearer, header or query');
  const auth: Record<string, string> = { type, secret: await readSecret(io, values) };
  const name = optionalString(values, 'auth-name');
  if (name !== undefined) auth['name'] = name;
  return auth;
}

const AUTH_OPTIONS = {
  'auth-type': { type: 'string' },
  'auth-name': { type: 'string' },
  'auth-secret-env': { type: 'string' },
  'auth-secret-file': { type: 'string' },
} as const;

const add: CliCommand = {
  name: 'apis add',
  summary: 'register an API origin (https URL) for a project',
  usage:
    '--project <slug> --name <name> --base-url <url> [--auth-type bearer|header|query [--auth-name <name>] (--auth-secret-env <VAR> | --auth-secret-file <path|->)]',
  details: [
    'The secret is sent to the gateway once, stored encrypted, and shown back only as its last 4 characters.',
    'Example: API_KEY=… tollgate apis add --project weather --name upstream --base-url https://api.example.com \\',
    '           --auth-type header --auth-name x-api-key --auth-secret-env API_KEY',
  ].join('\n'),
  options: {
    project: { type: 'string' },
    name: { type: 'string' },
    'base-url': { type: 'string' },
    ...AUTH_OPTIONS,
  },
  async run(io, values) {
    const body: Record<string, unknown> = {
      name: requireString(values, 'name'),
      baseUrl: requireString(values, 'base-url'),
    };
    const auth = await originAuth(io, values);
    if (auth) body['auth'] = auth;
    const path = projectPath(requireString(values, 'project'), 'apis');
    return clientFor(io, values).request('POST', path, body);
  },
};

const update: CliCommand = {
  name: 'apis update',
  summary: "change an API's name, base URL or origin credentials",
  usage:
    '--project <slug> --id <apiId> [--name <name>] [--base-url <url>] [--auth-type bearer|header|query [--auth-name <name>] (--auth-secret-env <VAR> | --auth-secret-file <path|->) | --remove-auth]',
  details: [
    'Only the fields given change (PATCH …/apis/{id}). --auth-type replaces the stored credentials',
    '(the secret is read as for `apis add`, never from the command line); --remove-auth drops them.',
  ].join('\n'),
  options: {
    project: { type: 'string' },
    id: { type: 'string' },
    name: { type: 'string' },
    'base-url': { type: 'string' },
    ...AUTH_OPTIONS,
    'remove-auth': { type: 'boolean' },
  },
  async run(io, values) {
    const path = itemPath(values, 'apis');
    const body: Record<string, unknown> = {};
    const name = optionalString(values, 'name');
    const baseUrl = optionalString(values, 'base-url');
    if (name !== undefined) body['name'] = name;
    if (baseUrl !== undefined) body['baseUrl'] = baseUrl;
    const auth = await originAuth(io, values);
    if (auth && values['remove-auth'] === true)
      throw new UsageError('--auth-type and --remove-auth conflict');
    if (auth) body['auth'] = auth;
    if (values['remove-auth'] === true) body['auth'] = null;
    if (Object.keys(body).length === 0) {
      throw new UsageError('nothing to update: give --name, --base-url, --auth-type or --remove-auth');
    }
    return clientFor(io, values).request('PATCH', path, body);
  },
};

export const commands: CliCommand[] = [
  add,
  listCommand('apis', "list a project's API origins"),
  showCommand('apis', 'show one API origin'),
  update,
  deleteCommand('apis', 'delete an API origin and the endpoints that forward to it'),
];
