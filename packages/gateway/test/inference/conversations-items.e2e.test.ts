/**
 * Conversations through the official `openai` SDK: OpenAI's item shapes in
 * (`{ type: "message", role, content: [{ type: "input_text" | "output_text", text }] }`
 * and `content` as a string), OpenAI's `Conversation` / `Message` shapes out, paging
 * by item id as the SDK does, and the short `{ role, content }` form kept.
 */
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { challenge } from '../support/x402.ts';
import { type InferenceHarness, startInferenceHarness } from './inference-harness.ts';

let h: InferenceHarness;
let token: string;
let client: OpenAI;
beforeAll(async () => {
  h = await startInferenceHarness();
  token = (await h.signIn()).token;
  // The bearer token from sign-in is the SDK's API key.
  client = new OpenAI({ baseURL: `${h.baseUrl}/v1`, apiKey: token, maxRetries: 0 });
});
afterAll(async () => {
  await h?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: the tests read errors loosely
type Json = Record<string, any>;
async function rejection(p: Promise<unknown>): Promise<Json> {
  try {
    await p;
  } catch (e) {
    return e as Json;
  }
  throw new Error('expected the call to fail');
}

/** What the SDK's message items say, without the ids and times. */
function summary(items: OpenAI.Conversations.ConversationItem[]) {
  return items.map((i) => {
    if (i.type !== 'message') throw new Error(`unexpected item type ${i.type}`);
    expect(i.id).toMatch(/^item_/);
    expect(i.status).toBe('completed');
    return [i.role, i.content];
  });
}

const input = (text: string) => ({ type: 'input_text' as const, text });
const output = (text: string) => ({ type: 'output_text' as const, text, annotations: [] });

describe('conversations through the openai SDK', () => {
  it('creates with OpenAI items and lists them back as Message items, across pages', async () => {
    const conv = await client.conversations.create({
      metadata: { topic: 'travel' },
      items: [
        { type: 'message', role: 'system', content: 'Be brief.' },
        { type: 'message', role: 'user', content: [input('Plan a day '), input('in Oslo.')] },
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          content: [output('Start at the harbour.')],
        },
        { role: 'user', content: 'And the evening?' },
        { type: 'message', role: 'developer', content: [input('Answer in English.')] },
      ],
    });
    expect(conv).toMatchObject({ object: 'conversation', metadata: { topic: 'travel' } });
    expect(conv.id).toMatch(/^conv_/);
    expect(typeof conv.created_at).toBe('number');

    // limit 2 makes the SDK fetch three pages, each after the last item's id.
    const items = [];
    for await (const item of client.conversations.items.list(conv.id, { limit: 2 })) items.push(item);
    expect(summary(items)).toEqual([
      ['system', [input('Be brief.')]],
      ['user', [input('Plan a day in Oslo.')]],
      ['assistant', [output('Start at the harbour.')]],
      ['user', [input('And the evening?')]],
      // Chat upstreams other than OpenAI know no `developer` role: it is kept as a system message.
      ['system', [input('Answer in English.')]],
    ]);

    const desc = await client.conversations.items.list(conv.id, { order: 'desc', limit: 2 });
    expect(summary(desc.data).map(([, c]) => c)).toEqual([
      [input('Answer in English.')],
      [input('And the evening?')],
    ]);
    expect(desc.has_more).toBe(true);

    const one = await client.conversations.items.retrieve(items[2]!.id as string, {
      conversation_id: conv.id,
    });
    expect(summary([one])).toEqual([['assistant', [output('Start at the harbour.')]]]);
  });

  it('appends items with items.create and reads the conversation, updates and deletes it', async () => {
    const conv = await client.conversations.create({});
    const added = await client.conversations.items.create(conv.id, {
      items: [
        { type: 'message', role: 'user', content: [input('Hello')] },
        { role: 'assistant', content: 'Hi there.' },
      ],
    });
    expect(added.object).toBe('list');
    expect(summary(added.data)).toEqual([
      ['user', [input('Hello')]],
      ['assistant', [output('Hi there.')]],
    ]);
    expect(added).toMatchObject({ first_id: added.data[0]!.id, last_id: added.data[1]!.id, has_more: false });

    expect(await client.conversations.retrieve(conv.id)).toMatchObject({
      id: conv.id,
      object: 'conversation',
    });
    const updated = await client.conversations.update(conv.id, { metadata: { k: 'v' } });
    expect(updated.metadata).toEqual({ k: 'v' });
    expect(await client.conversations.delete(conv.id)).toEqual({
      id: conv.id,
      object: 'conversation.deleted',
      deleted: true,
    });
    const gone = await rejection(client.conversations.retrieve(conv.id));
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect(gone.code).toBe('not_found');
  });

  it('refuses items it cannot price or store, naming the field', async () => {
    const image = await rejection(
      client.conversations.create({
        items: [
          {
            type: 'message',
            role: 'user',
            content: [{ type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' }],
          },
        ],
      }),
    );
    expect(image).toBeInstanceOf(OpenAI.BadRequestError);
    expect(image.param).toBe('items.0.content.0.type');
    expect(image.message).toMatch(/^400 items\.0\.content\.0\.type: .*cannot be priced/);

    const call = await rejection(
      client.conversations.create({
        items: [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }],
      }),
    );
    expect(call).toBeInstanceOf(OpenAI.BadRequestError);
    expect(call.param).toBe('items.0.type');

    const unknown = await rejection(
      client.conversations.create({
        items: [{ type: 'message', role: 'user', content: 'x', colour: 'red' } as never],
      }),
    );
    expect(unknown.message).toBe('400 unsupported parameter: colour');
    expect(unknown.param).toBe('items.0.colour');
  });

  it('a paid turn quotes the stored text of the parts', async () => {
    const conv = await client.conversations.create({
      items: [{ type: 'message', role: 'user', content: [input('one '), input('two')] }],
    });
    const { requirement } = await challenge(`${h.baseUrl}/v1/conversations/${conv.id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'three', model: 'tollgate-dev-chat' }),
    });
    const tokens = (role: string, text: string) => 3 + encode(role).length + encode(text).length;
    const prompt = 3 + tokens('user', 'one two') + tokens('user', 'three');
    expect(requirement.description).toContain(`${prompt} prompt tokens`);
  });
});

describe('the items list on the wire', () => {
  it('keeps the seq cursor and the short form, and refuses an unknown item id as cursor', async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${h.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const conv = await call('POST', '/v1/conversations', {
      items: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: 'c' },
      ],
    });
    const id = conv.body.id as string;
    const page = await call('GET', `/v1/conversations/${id}/items?after=1`);
    expect(page.body.data.map((i: Json) => [i.seq, i.object, i.type, i.content[0].text])).toEqual([
      [2, 'conversation.item', 'message', 'b'],
      [3, 'conversation.item', 'message', 'c'],
    ]);
    const byId = await call('GET', `/v1/conversations/${id}/items?after=${page.body.data[0].id}`);
    expect(byId.body.data.map((i: Json) => i.seq)).toEqual([3]);
    const bad = await call('GET', `/v1/conversations/${id}/items?after=item_nope`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', param: 'after' });
    const order = await call('GET', `/v1/conversations/${id}/items?order=sideways`);
    expect(order.status).toBe(400);
    expect(order.body.error).toMatchObject({ code: 'invalid_request', param: 'order' });
    const missing = await call('GET', `/v1/conversations/${id}/items/item_nope`);
    expect(missing.status).toBe(404);
  });
});
