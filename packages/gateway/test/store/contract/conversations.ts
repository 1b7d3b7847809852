import { describe, expect, it } from 'vitest';
import { type ConversationItem, type Store, UniqueViolationError } from '../../../src/store/store.ts';
import { alice, bob } from './fixtures.ts';

type NewItem = Omit<ConversationItem, 'id' | 'conversationId' | 'seq' | 'createdAt'>;

function item(content: string, extra: Partial<NewItem> = {}): NewItem {
  return { role: 'user', content, redemptionId: null, usage: null, ...extra };
}

export function conversationContract(get: () => Store): void {
  describe('conversations', () => {
    it('creates, reads, updates and deletes a conversation for its owner only', async () => {
      const s = get();
      const c = await s.conversations.create({
        owner: alice,
        title: 'Hi',
        model: 'local-chat',
        metadata: { a: [1] },
      });
      expect(c).toMatchObject({ owner: alice, title: 'Hi', model: 'local-chat', metadata: { a: [1] } });
      expect(c.id).toMatch(/^conv_/);
      expect(await s.conversations.byId(alice, c.id)).toEqual(c);
      expect(await s.conversations.byId(bob, c.id)).toBeNull();

      expect(await s.conversations.update(bob, c.id, { title: 'stolen' })).toBeNull();
      const u = await s.conversations.update(alice, c.id, {
        title: 'Renamed',
        model: null,
        metadata: { b: true },
      });
      expect(u).toMatchObject({
        id: c.id,
        title: 'Renamed',
        model: null,
        metadata: { b: true },
        createdAt: c.createdAt,
      });
      expect(await s.conversations.byId(alice, c.id)).toEqual(u);

      expect(await s.conversations.delete(bob, c.id)).toBe(false);
      expect(await s.conversations.delete(alice, c.id)).toBe(true);
      expect(await s.conversations.byId(alice, c.id)).toBeNull();
      expect(await s.conversations.delete(alice, c.id)).toBe(false);
    });

    it('lists the owner’s conversations newest first, paging by the last id', async () => {
      const s = get();
      const made = [];
      for (let i = 0; i < 5; i++) {
        made.push(await s.conversations.create({ owner: alice, title: `c${i}`, model: null, metadata: {} }));
      }
      await s.conversations.create({ owner: bob, title: 'bob', model: null, metadata: {} });
      const page1 = await s.conversations.list(alice, { limit: 2 });
      expect(page1.map((c) => c.title)).toEqual(['c4', 'c3']);
      const page2 = await s.conversations.list(alice, { limit: 2, before: page1.at(-1)!.id });
      expect(page2.map((c) => c.title)).toEqual(['c2', 'c1']);
      const page3 = await s.conversations.list(alice, { limit: 2, before: page2.at(-1)!.id });
      expect(page3.map((c) => c.title)).toEqual(['c0']);
      expect((await s.conversations.list(bob, { limit: 10 })).map((c) => c.title)).toEqual(['bob']);
    });

    it('appends items with consecutive seq numbers and pages through them', async () => {
      const s = get();
      const c = await s.conversations.create({ owner: alice, title: 't', model: null, metadata: {} });
      const first = await s.conversations.append(c.id, [
        item('hello'),
        item('hi there', { role: 'assistant' }),
      ]);
      expect(first.map((i) => [i.seq, i.role, i.content])).toEqual([
        [1, 'user', 'hello'],
        [2, 'assistant', 'hi there'],
      ]);
      const paid = await s.conversations.append(c.id, [
        item('answer', {
          role: 'assistant',
          redemptionId: 'rdm_1',
          usage: { prompt_tokens: 3, completion_tokens: 5 },
        }),
      ]);
      expect(paid[0]).toMatchObject({
        seq: 3,
        conversationId: c.id,
        redemptionId: 'rdm_1',
        usage: { prompt_tokens: 3 },
      });
      expect(await s.conversations.append(c.id, [])).toEqual([]);

      const all = await s.conversations.items(c.id, { limit: 10 });
      expect(all).toEqual([...first, ...paid]);
      expect((await s.conversations.items(c.id, { limit: 1, after: 1 })).map((i) => i.seq)).toEqual([2]);
      expect(await s.conversations.items(c.id, { limit: 10, after: 3 })).toEqual([]);
      await expect(s.conversations.append('conv_missing', [item('x')])).rejects.toThrow();
    });

    it('keeps seq numbers consecutive under concurrent appends', async () => {
      const s = get();
      const c = await s.conversations.create({ owner: alice, title: 't', model: null, metadata: {} });
      const batches = await Promise.all(
        Array.from({ length: 10 }, (_, i) => s.conversations.append(c.id, [item(`q${i}`), item(`a${i}`)])),
      );
      for (const b of batches) expect(b[1]!.seq).toBe(b[0]!.seq + 1);
      const seqs = (await s.conversations.items(c.id, { limit: 100 })).map((i) => i.seq);
      expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });

    it('stores a paid turn once per redemption, refusing a second copy atomically', async () => {
      const s = get();
      const c = await s.conversations.create({ owner: alice, title: 't', model: null, metadata: {} });
      const turn = [
        item('q', { redemptionId: 'rdm_1' }),
        item('a', { role: 'assistant', redemptionId: 'rdm_1' }),
      ];
      await s.conversations.append(c.id, turn);
      await expect(s.conversations.append(c.id, turn)).rejects.toBeInstanceOf(UniqueViolationError);
      const items = await s.conversations.items(c.id, { limit: 10 });
      expect(items.map((i) => i.content)).toEqual(['q', 'a']);
      // Unpaid items (no redemption) are not constrained.
      await s.conversations.append(c.id, [item('x'), item('x')]);
      expect(await s.conversations.items(c.id, { limit: 10 })).toHaveLength(4);
    });

    it('keeps model output with a NUL character, as the replacement character on every backend', async () => {
      const s = get();
      const c = await s.conversations.create({ owner: alice, title: 't', model: null, metadata: {} });
      await s.conversations.append(c.id, [item('a\u0000b', { role: 'assistant' })]);
      expect((await s.conversations.items(c.id, { limit: 1 }))[0]?.content).toBe('a\uFFFDb');
    });

    it('deleting a conversation deletes its items', async () => {
      const s = get();
      const c = await s.conversations.create({ owner: alice, title: 't', model: null, metadata: {} });
      await s.conversations.append(c.id, [item('x')]);
      await s.conversations.delete(alice, c.id);
      expect(await s.conversations.items(c.id, { limit: 10 })).toEqual([]);
    });
  });
}
