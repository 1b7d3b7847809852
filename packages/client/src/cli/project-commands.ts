/** Pieces the per-project command groups (apis, endpoints, rails) share. */
import { type CliCommand, printJson, requireString } from './command.ts';
import { clientFor } from './http.ts';

export type ProjectCollection = 'apis' | 'endpoints' | 'rails';

/** `/v1/projects/{slug}/{collection}`, the slug escaped. */
export function projectPath(slug: string, collection: ProjectCollection): string {
  return `/v1/projects/${encodeURIComponent(slug)}/${collection}`;
}

/** `tollgate <collection> list --project <slug>`: prints the gateway's list as it comes. */
export function listCommand(collection: ProjectCollection, summary: string): CliCommand {
  return {
    name: `${collection} list`,
    summary,
    usage: '--project <slug>',
    options: { project: { type: 'string' } },
    async run(io, values) {
      printJson(
        io,
        await clientFor(io, values).request('GET', projectPath(requireString(values, 'project'), collection)),
      );
    },
  };
}
