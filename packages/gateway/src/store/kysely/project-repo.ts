import type { ExpressionBuilder, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { DirectoryQuery, NewProject, Owner, Project, ProjectPatch, ProjectRepo } from '../store.ts';
import type { Backend } from './backend.ts';
import { newId } from './ids.ts';
import { containsPattern, nowIso, pageSize, toBool, toNum } from './rows.ts';
import type { Database, ProjectsTable } from './schema.ts';
import { translateUnique } from './unique.ts';

type ProjectsEb = ExpressionBuilder<Database & { p: ProjectsTable }, 'p'>;

function toProject(r: Selectable<ProjectsTable>): Project {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    description: r.description,
    category: r.category,
    owner: { chain: r.owner_chain as Owner['chain'], address: r.owner_address },
    x402Exact: toBool(r.x402_exact),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Listed in the directory: at least one enabled endpoint and at least one rail. */
function isListed(eb: ProjectsEb) {
  return eb.and([
    eb.exists(
      eb
        .selectFrom('endpoints as e')
        .select(sql<number>`1`.as('x'))
        .whereRef('e.project_id', '=', 'p.id')
        .where('e.enabled', '=', true),
    ),
    eb.exists(
      eb.selectFrom('rails as r').select(sql<number>`1`.as('x')).whereRef('r.project_id', '=', 'p.id'),
    ),
  ]);
}

export function projectRepo(backend: Backend): ProjectRepo {
  const { db } = backend;
  return {
    async create(p: NewProject) {
      const now = nowIso();
      const row = {
        id: newId('prj'),
        slug: p.slug,
        name: p.name,
        description: p.description,
        category: p.category,
        owner_chain: p.owner.chain,
        owner_address: p.owner.address,
        x402_exact: p.x402Exact ?? false,
        created_at: now,
        updated_at: now,
      };
      await translateUnique(backend, `project slug "${p.slug}" is taken`, () =>
        db.insertInto('projects').values(row).execute(),
      );
      return toProject(row);
    },

    async bySlug(slug) {
      const r = await db.selectFrom('projects').selectAll().where('slug', '=', slug).executeTakeFirst();
      return r ? toProject(r) : null;
    },

    async byId(id) {
      const r = await db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
      return r ? toProject(r) : null;
    },

    async listByOwner(owner) {
      const rows = await db
        .selectFrom('projects')
        .selectAll()
        .where('owner_chain', '=', owner.chain)
        .where('owner_address', '=', owner.address)
        .orderBy('slug')
        .execute();
      return rows.map(toProject);
    },

    async listAll() {
      const rows = await db.selectFrom('projects').selectAll().orderBy('slug').execute();
      return rows.map(toProject);
    },

    async update(id, patch: ProjectPatch) {
      const r = await db
        .updateTable('projects')
        .set({
          ...(patch.name !== undefined ? { name: patch.name } : {}),
          ...(patch.description !== undefined ? { description: patch.description } : {}),
          ...(patch.category !== undefined ? { category: patch.category } : {}),
          ...(patch.x402Exact !== undefined ? { x402_exact: patch.x402Exact } : {}),
          updated_at: nowIso(),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return r ? toProject(r) : null;
    },

    async delete(id) {
      // APIs, endpoints and rails go with it through ON DELETE CASCADE, in this one statement.
      const r = await db.deleteFrom('projects').where('id', '=', id).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },

    async listListed(q: DirectoryQuery) {
      let query = db
        .selectFrom('projects as p')
        .selectAll('p')
        .where((eb) => isListed(eb));
      if (q.q !== undefined && q.q.trim() !== '') {
        const pattern = containsPattern(q.q.trim());
        query = query.where((eb) =>
          eb.or(
            (['p.name', 'p.description', 'p.slug'] as const).map(
              (col) => sql<boolean>`lower(${eb.ref(col)}) like ${pattern} escape '\\'`,
            ),
          ),
        );
      }
      if (q.category !== undefined) query = query.where('p.category', '=', q.category);
      if (q.after !== undefined) query = query.where('p.slug', '>', q.after);
      const rows = await query.orderBy('p.slug').limit(pageSize(q.limit)).execute();
      return rows.map(toProject);
    },

    async listedCategories() {
      const rows = await db
        .selectFrom('projects as p')
        .select((eb) => ['p.category', eb.fn.countAll().as('count')])
        .where((eb) => isListed(eb))
        .groupBy('p.category')
        .orderBy('p.category')
        .execute();
      return rows.map((r) => ({ category: r.category, count: toNum(r.count as number | string | bigint) }));
    },
  };
}
