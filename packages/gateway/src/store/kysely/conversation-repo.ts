import type { Selectable } from 'kysely';
import type { Chain, Conversation, ConversationItem, ConversationRepo, Owner } from '../store.ts';
import type { Backend } from './backend.ts';
import { newId } from './ids.ts';
import { fromJson, nowIso, pageSize } from './rows.ts';
import type { ConversationItemsTable, ConversationsTable } from './schema.ts';
import { translateUnique } from './unique.ts';

function toConversation(r: Selectable<ConversationsTable>): Conversation {
  return {
    id: r.id,
    owner: { chain: r.owner_chain as Chain, address: r.owner_address },
    title: r.title,
    model: r.model,
    metadata: fromJson<Record<string, unknown>>(r.metadata) ?? {},
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toItem(r: Selectable<ConversationItemsTable>): ConversationItem {
  return {
    id: r.id,
    conversationId: r.conversation_id,
    seq: r.seq,
    role: r.role as ConversationItem['role'],
    content: r.content,
    redemptionId: r.redemption_id,
    usage: fromJson<Record<string, unknown>>(r.usage),
    createdAt: r.created_at,
  };
}

export function conversationRepo(backend: Backend): ConversationRepo {
  const { db } = backend;
  const mine = (owner: Owner) => (id: string) =>
    db
      .selectFrom('conversations')
      .selectAll()
      .where('id', '=', id)
      .where('owner_chain', '=', owner.chain)
      .where('owner_address', '=', owner.address);

  return {
    async create(c) {
      const now = nowIso();
      const row = {
        id: newId('conv'),
        owner_chain: c.owner.chain,
        owner_address: c.owner.address,
        title: c.title,
        model: c.model,
        metadata: JSON.stringify(c.metadata),
        created_at: now,
        updated_at: now,
      };
      await db.insertInto('conversations').values(row).execute();
      return toConversation(row);
    },

    async byId(owner, id) {
      const r = await mine(owner)(id).executeTakeFirst();
      return r ? toConversation(r) : null;
    },

    async list(owner, opts) {
      // Ids sort by creation time (ids.ts), so the id alone is the page cursor.
      let q = db
        .selectFrom('conversations')
        .selectAll()
        .where('owner_chain', '=', owner.chain)
        .where('owner_address', '=', owner.address);
      if (opts.before !== undefined) q = q.where('id', '<', opts.before);
      const rows = await q.orderBy('id', 'desc').limit(pageSize(opts.limit)).execute();
      return rows.map(toConversation);
    },

    async update(owner, id, patch) {
      const r = await db
        .updateTable('conversations')
        .set({
          ...(patch.title !== undefined ? { title: patch.title } : {}),
          ...(patch.model !== undefined ? { model: patch.model } : {}),
          ...(patch.metadata !== undefined ? { metadata: JSON.stringify(patch.metadata) } : {}),
          updated_at: nowIso(),
        })
        .where('id', '=', id)
        .where('owner_chain', '=', owner.chain)
        .where('owner_address', '=', owner.address)
        .returningAll()
        .executeTakeFirst();
      return r ? toConversation(r) : null;
    },

    async delete(owner, id) {
      // Items go with it (ON DELETE CASCADE).
      const r = await db
        .deleteFrom('conversations')
        .where('id', '=', id)
        .where('owner_chain', '=', owner.chain)
        .where('owner_address', '=', owner.address)
        .executeTakeFirst();
      return r.numDeletedRows > 0n;
    },

    async append(conversationId, items) {
      if (items.length === 0) return [];
      return db.transaction().execute(async (trx) => {
        // The row lock serializes appenders; unique (conversation_id, seq) is the backstop.
        if (!(await backend.lockConversation(trx, conversationId))) {
          throw new Error(`conversation ${conversationId} does not exist`);
        }
        const top = await trx
          .selectFrom('conversation_items')
          .select((eb) => eb.fn.max('seq').as('seq'))
          .where('conversation_id', '=', conversationId)
          .executeTakeFirst();
        const start = (top?.seq ?? 0) + 1;
        const now = nowIso();
        const rows = items.map((it, i) => ({
          id: newId('item'),
          conversation_id: conversationId,
          seq: start + i,
          role: it.role,
          // Model output may contain NUL, which PostgreSQL text cannot hold (SQLite could):
          // keep both backends alike with the replacement character.
          content: it.content.replaceAll('\u0000', '\uFFFD'),
          redemption_id: it.redemptionId,
          usage: it.usage === null ? null : JSON.stringify(it.usage),
          created_at: now,
        }));
        await translateUnique(backend, 'this paid turn is already stored', () =>
          trx.insertInto('conversation_items').values(rows).execute(),
        );
        await trx
          .updateTable('conversations')
          .set({ updated_at: now })
          .where('id', '=', conversationId)
          .execute();
        return rows.map(toItem);
      });
    },

    async items(conversationId, opts) {
      let q = db.selectFrom('conversation_items').selectAll().where('conversation_id', '=', conversationId);
      if (opts.after !== undefined) q = q.where('seq', '>', opts.after);
      const rows = await q.orderBy('seq').limit(pageSize(opts.limit)).execute();
      return rows.map(toItem);
    },
  };
}
