/** Public directory (SPEC §4.3): listed APIs with cursor pagination, one API's endpoints, categories. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import {
  directoryDetail,
  directorySummary,
  isListed,
  listDirectory,
  loadListing,
} from '../providers/directory.ts';
import { CATEGORY_PATTERN, invalid, isSlug } from '../providers/rules.ts';
import { useStrictValidation } from './providers/strict-schema.ts';

export const DIRECTORY_DEFAULT_LIMIT = 20;
export const DIRECTORY_MAX_LIMIT = 100;

/** Cursors are opaque to callers; inside they are the last slug of the page. */
export function encodeCursor(slug: string): string {
  return Buffer.from(slug, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const slug = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!isSlug(slug) || encodeCursor(slug) !== cursor) throw invalid('cursor is not valid', 'invalid_cursor');
  return slug;
}

interface ListQuery {
  q?: string;
  category?: string;
  cursor?: string;
  limit: number;
}

export function directoryRoutes(app: FastifyInstance, deps: Deps): void {
  app.register(async (scope) => {
    useStrictValidation(scope);
    scope.addHook('onSend', async (_request, reply) => {
      if (reply.statusCode === 200) reply.header('cache-control', 'public, max-age=10');
    });

    scope.get<{ Querystring: ListQuery }>(
      '/v1/directory/apis',
      {
        schema: {
          querystring: {
            type: 'object',
            properties: {
              q: { type: 'string', maxLength: 100 },
              category: { type: 'string', pattern: CATEGORY_PATTERN },
              cursor: { type: 'string', minLength: 1, maxLength: 200 },
              limit: {
                type: 'integer',
                minimum: 1,
                maximum: DIRECTORY_MAX_LIMIT,
                default: DIRECTORY_DEFAULT_LIMIT,
              },
            },
          },
        },
      },
      async (request) => {
        const { q, category, cursor, limit } = request.query;
        const { listings, nextAfter } = await listDirectory(deps, {
          ...(q ? { q } : {}),
          ...(category ? { category } : {}),
          ...(cursor ? { after: decodeCursor(cursor) } : {}),
          limit,
        });
        return {
          apis: listings.map((l) => directorySummary(deps, l)),
          nextCursor: nextAfter === null ? null : encodeCursor(nextAfter),
        };
      },
    );

    scope.get<{ Params: { slug: string } }>('/v1/directory/apis/:slug', async (request) => {
      const { slug } = request.params;
      const listing = isSlug(slug) ? await loadListing(deps, slug) : null;
      if (!listing || !isListed(listing)) {
        throw new ApiError('not_found', `no listed API "${slug}"`, { reason: 'project_not_found' });
      }
      return directoryDetail(deps, listing);
    });

    scope.get('/v1/directory/categories', async () => {
      const categories = await deps.store.projects.listedCategories();
      return { categories: categories.map((c) => ({ category: c.category, count: c.count })) };
    });
  });
}
