/** `tollgate apis add|list`: register the origin a project forwards to. */
import { readFileSync } from 'node:fs';
import {
  type CliCommand,
  type CliIo,
  optionalString,
  type ParsedValues,
  printJson,
  requireString,
  UsageError,
} from '../command.ts';
import { clientFor } from '../http.ts';
import { listCommand, projectPath } from '../project-commands.ts';

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
    'auth-type': { type: 'string' },
    'auth-name': { type: 'string' },
    'auth-secret-env': { type: 'string' },
    'auth-secret-file': { type: 'string' },
  },
  async run(io, values) {
    const body: Record<string, unknown> = {
      name: requireString(values, 'name'),
      baseUrl: requireString(values, 'base-url'),
    };
    const type = optionalString(values, 'auth-type');
    if (type !== undefined) {
      if (!['bearer', 'header', 'query'].includes(type))
        throw new UsageError('--auth-type must be bearer, header or query');
      const auth: Record<string, string> = { type, secret: await readSecret(io, values) };
      const name = optionalString(values, 'auth-name');
      if (name !== undefined) auth['name'] = name;
      body['auth'] = auth;
    } else if (
      values['auth-name'] !== undefined ||
      values['auth-secret-env'] !== undefined ||
      values['auth-secret-file'] !== undefined
    ) {
      throw new UsageError('--auth-name and --auth-secret-* need --auth-type');
    }
    const path = projectPath(requireString(values, 'project'), 'apis');
    printJson(io, await clientFor(io, values).request('POST', path, body));
  },
};

export const commands: CliCommand[] = [add, listCommand('apis', "list a project's API origins")];
