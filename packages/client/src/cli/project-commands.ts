/** Pieces the per-project command groups (apis, endpoints, rails) share. */
import { type CliCommand, type ParsedValues, requireString, wantsJson } from './command.ts';
import { clientFor } from './http.ts';

export type ProjectCollection = 'apis' | 'endpoints' | 'rails';

/** `/v1/projects/{slug}/{collection}`, the slug escaped. */
export function projectPath(slug: string, collection: ProjectCollection): string {
  return `/v1/projects/${encodeURIComponent(slug)}/${collection}`;
}

/** `/v1/projects/{slug}/{collection}/{id}` from `--project` and `--id`, both escaped. */
export function itemPath(values: ParsedValues, collection: ProjectCollection, idFlag = 'id'): string {
  const slug = requireString(values, 'project');
  return `${projectPath(slug, collection)}/${encodeURIComponent(requireString(values, idFlag))}`;
}

/** `tollgate <collection> list --project <slug>`: prints the gateway's list as it comes. */
export function listCommand(collection: ProjectCollection, summary: string): CliCommand {
  return {
    name: `${collection} list`,
    summary,
    usage: '--project <slug>',
    options: { project: { type: 'string' } },
    async run(io, values) {
      return clientFor(io, values).request('GET', projectPath(requireString(values, 'project'), collection));
    },
  };
}

/** What a collection's items are called, for messages and `--json` results. */
const ITEM: Record<'apis' | 'endpoints', 'api' | 'endpoint'> = { apis: 'api', endpoints: 'endpoint' };

/** `tollgate <collection> show --project <slug> --id <id>`: `GET …/{id}`. */
export function showCommand(collection: 'apis' | 'endpoints', summary: string): CliCommand {
  return {
    name: `${collection} show`,
    summary,
    usage: '--project <slug> --id <id>',
    options: { project: { type: 'string' }, id: { type: 'string' } },
    async run(io, values) {
      return clientFor(io, values).request('GET', itemPath(values, collection));
    },
  };
}

/** `tollgate <collection> delete --project <slug> --id <id>`: `DELETE …/{id}`. */
export function deleteCommand(collection: 'apis' | 'endpoints', summary: string): CliCommand {
  return {
    name: `${collection} delete`,
    summary,
    usage: '--project <slug> --id <id>',
    options: { project: { type: 'string' }, id: { type: 'string' } },
    async run(io, values) {
      const project = requireString(values, 'project');
      const id = requireString(values, 'id');
      await clientFor(io, values).request('DELETE', itemPath(values, collection));
      io.err(`deleted ${ITEM[collection]} ${id} of project ${project}`);
      return wantsJson(values) ? { deleted: { project, [ITEM[collection]]: id } } : undefined;
    },
  };
}
