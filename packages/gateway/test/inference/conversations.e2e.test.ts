/**
 * Conversations: owner-scoped CRUD and items, and paid turns whose quote counts the
 * stored history and which store the user message and the reply once per payment.
 */
import type { PaymentWallet } from '@tollgate/client';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { challenge, payFor, withPayment } from '../support/x402.ts';
import { type InferenceHarness, startInferenceHarness } from './inference-harness.ts';

let h: InferenceHarness;
let payer: PaymentWallet;
let alice: string;
let bob: string;
beforeAll(async () => {
  h = await startInferenceHarness();
  payer = await h.newPayer('sui', '5');
  alice = (await h.signIn()).token;
  bob = (await h.signIn({ chain: 'sui', address: `0x${'b'.repeat(64)}` })).token;
});
afterAll(async () => {
  await h?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: the test reads response JSON loosely
type Json = Record<string, any>;
async function call(
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
  extra: Record<string, string> = {},
) {
  const res = await fetch(`${h.baseUrl}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...extra,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json, res };
}
const turnInit = (token: string, body: unknown): RequestInit => ({
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

function prompt(messages: { role: string; content: string }[]): number {
  return 3 + messages.reduce((n, m) => n + 3 + encode(m.role).length + encode(m.content).length, 0);
}

describe('conversation records', () => {
  it('creates, reads, updates, lists and deletes only my own conversations', async () => {
    const created = await call(alice, 'POST', '/v1/conversations', {
      title: 'Trip',
      model: 'tollgate-dev-chat',
      metadata: { topic: 'travel' },
      items: [{ role: 'system', content: 'Be brief.' }],
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'conversation',
      title: 'Trip',
      model: 'tollgate-dev-chat',
      metadata: { topic: 'travel' },
    });
    const id = created.body.id as string;
    expect(id).toMatch(/^conv_/);

    expect((await call(alice, 'GET', `/v1/conversations/${id}`)).body.title).toBe('Trip');
    expect(
      (await call(alice, 'PATCH', `/v1/conversations/${id}`, { title: 'Trip to Oslo' })).body.title,
    ).toBe('Trip to Oslo');
    expect(
      (await call(alice, 'POST', `/v1/conversations/${id}`, { metadata: { topic: 'norway' } })).body.metadata,
    ).toEqual({ topic: 'norway' });
    const items = await call(alice, 'GET', `/v1/conversations/${id}/items`);
    expect(items.body).toMatchObject({
      object: 'list',
      has_more: false,
      data: [{ role: 'system', content: [{ text: 'Be brief.' }] }],
    });

    for (const [method, path] of [
      ['GET', `/v1/conversations/${id}`],
      ['PATCH', `/v1/conversations/${id}`],
      ['DELETE', `/v1/conversations/${id}`],
      ['GET', `/v1/conversations/${id}/items`],
      ['POST', `/v1/conversations/${id}/messages`],
    ] as const) {
      const r = await call(
        bob,
        method,
        path,
        method === 'GET' || method === 'DELETE' ? undefined : { content: 'hi', title: 'x' },
      );
      expect([method, path, r.status, r.body.error.code]).toEqual([method, path, 404, 'not_found']);
    }
    expect((await call(bob, 'GET', '/v1/conversations')).body.data).toEqual([]);

    expect((await call(alice, 'DELETE', `/v1/conversations/${id}`)).body).toEqual({
      id,
      object: 'conversation.deleted',
      deleted: true,
    });
    expect((await call(alice, 'GET', `/v1/conversations/${id}`)).status).toBe(404);
  });

  it('pages my conversations newest first', async () => {
    const { token } = await h.signIn();
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push((await call(token, 'POST', '/v1/conversations', { title: `c${i}` })).body.id);
    const first = await call(token, 'GET', '/v1/conversations?limit=2');
    expect(first.body.data.map((c: Json) => c.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.has_more).toBe(true);
    const second = await call(token, 'GET', `/v1/conversations?limit=2&after=${first.body.last_id}`);
    expect(second.body.data.map((c: Json) => c.id)).toEqual([ids[0]]);
    expect(second.body.has_more).toBe(false);
    // A repeated paging parameter is a 400, never passed on to the store.
    for (const q of ['after=a&after=b', 'limit=1&limit=2']) {
      const r = await call(token, 'GET', `/v1/conversations?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('invalid_request');
    }
    expect((await call(token, 'GET', `/v1/conversations/${ids[0]}/items?after=1&after=2`)).status).toBe(400);
  });

  it('needs a bearer token of a wallet owner', async () => {
    expect((await call(null, 'GET', '/v1/conversations')).status).toBe(401);
    expect((await call('operator-token-0123456789abcdef', 'GET', '/v1/conversations')).status).toBe(403);
    expect((await call(alice, 'POST', '/v1/conversations', { model: 'no-such-model' })).body.error.code).toBe(
      'model_not_found',
    );
  });
});

describe('paid conversation turns', () => {
  it('quotes the stored history, stores both messages once, and replays without appending', async () => {
    const conv = await call(alice, 'POST', '/v1/conversations', {
      model: 'tollgate-dev-chat',
      items: [
        { role: 'system', content: 'You are a travel guide.' },
        { role: 'user', content: 'I am going to Oslo.' },
        { role: 'assistant', content: 'Lovely city.' },
      ],
    });
    const id = conv.body.id as string;
    const url = `${h.baseUrl}/v1/conversations/${id}/messages`;
    const turn = { content: 'What should I see?', max_tokens: 10 };

    const { requirement } = await challenge(url, turnInit(alice, turn));
    const p = prompt([
      { role: 'system', content: 'You are a travel guide.' },
      { role: 'user', content: 'I am going to Oslo.' },
      { role: 'assistant', content: 'Lovely city.' },
      { role: 'user', content: 'What should I see?' },
    ]);
    // dev chat: 1 atomic per input token, 2 per output token.
    expect(requirement.cost?.inference?.amount).toBe(((p + 20) / 1e6).toFixed(6).replace(/0+$/, ''));
    expect(requirement.resource).toBe(`POST /v1/conversations/${id}/messages`);

    const { header } = await payFor(payer, requirement);
    const paid = await fetch(url, withPayment(turnInit(alice, turn), header));
    expect(paid.status).toBe(200);
    expect(paid.headers.get('x-payment-response')).toBeTruthy();
    const answer = (await paid.json()) as Json;
    expect(answer.conversation_id).toBe(id);
    expect(answer.usage).toMatchObject({ prompt_tokens: p, completion_tokens: 10 });
    expect(answer.items.map((i: Json) => i.role)).toEqual(['user', 'assistant']);
    expect(answer.choices[0].message.content).toBe(answer.items[1].content[0].text);

    const replay = await fetch(url, withPayment(turnInit(alice, turn), header));
    expect(replay.headers.get('x-tollgate-replay')).toBe('true');
    expect(await replay.json()).toEqual(answer);
    const items = await call(alice, 'GET', `/v1/conversations/${id}/items`);
    expect(items.body.data.map((i: Json) => i.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(items.body.data.slice(3).every((i: Json) => i.paid === true)).toBe(true);

    // The next turn sees the whole history, including the paid one.
    const next = { content: 'And after that?', max_tokens: 40 };
    const second = await challenge(url, turnInit(alice, next));
    const { header: h2 } = await payFor(payer, second.requirement);
    const reply2 = (await (await fetch(url, withPayment(turnInit(alice, next), h2))).json()) as Json;
    expect(reply2.choices[0].message.content).toContain('I read 6 messages');
  });

  it('answers from the stored items when a retry takes over a turn that was stored but not completed', async () => {
    const conv = await call(alice, 'POST', '/v1/conversations', { model: 'fake-chat' });
    const url = `${h.baseUrl}/v1/conversations/${conv.body.id}/messages`;
    const turn = { content: 'remember me', max_tokens: 3 };
    const { requirement } = await challenge(url, turnInit(alice, turn));
    const { header } = await payFor(payer, requirement);

    // The first attempt loses its lease between storing the turn and completing the payment.
    const redemptions = h.store.redemptions;
    const complete = redemptions.complete;
    redemptions.complete = async () => false;
    try {
      expect((await fetch(url, withPayment(turnInit(alice, turn), header))).status).toBe(200);
    } finally {
      redemptions.complete = complete;
    }
    const calls = h.fake.received.length;
    h.setClockOffset(h.config.leaseMs + 1000);
    try {
      const retry = await fetch(url, withPayment(turnInit(alice, turn), header));
      expect(retry.status).toBe(200);
      expect(((await retry.json()) as Json).choices[0].message.content).toBe('Hello from the');
    } finally {
      h.setClockOffset(0);
    }
    expect(h.fake.received.length).toBe(calls);
    const items = await call(alice, 'GET', `/v1/conversations/${conv.body.id}/items`);
    expect(items.body.data.map((i: Json) => i.role)).toEqual(['user', 'assistant']);
  });

  it('sends a stored turn again as a stream when a streaming retry takes over', async () => {
    const conv = await call(alice, 'POST', '/v1/conversations', { model: 'fake-chat' });
    const url = `${h.baseUrl}/v1/conversations/${conv.body.id}/messages`;
    const turn = { content: 'stream and remember', stream: true, max_tokens: 2 };
    const { requirement } = await challenge(url, turnInit(alice, turn));
    const { header } = await payFor(payer, requirement);
    const redemptions = h.store.redemptions;
    const complete = redemptions.complete;
    redemptions.complete = async () => false;
    try {
      await (await fetch(url, withPayment(turnInit(alice, turn), header))).text();
    } finally {
      redemptions.complete = complete;
    }
    const calls = h.fake.received.length;
    h.setClockOffset(h.config.leaseMs + 1000);
    let text: string;
    try {
      text = await (await fetch(url, withPayment(turnInit(alice, turn), header))).text();
    } finally {
      h.setClockOffset(0);
    }
    expect(h.fake.received.length).toBe(calls);
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    expect(JSON.parse(events[0]!).choices[0].delta.content).toBe('Hello from');
    expect(JSON.parse(events.at(-2)!).items).toHaveLength(2);
    expect((await call(alice, 'GET', `/v1/conversations/${conv.body.id}/items`)).body.data).toHaveLength(2);
  });

  it('keeps the proof usable and stores nothing when the model fails', async () => {
    const conv = await call(alice, 'POST', '/v1/conversations', { model: 'fake-chat' });
    const url = `${h.baseUrl}/v1/conversations/${conv.body.id}/messages`;
    const turn = { content: 'fail then work' };
    const { requirement } = await challenge(url, turnInit(alice, turn));
    const { header } = await payFor(payer, requirement);
    h.fake.queue.push('fail500');
    const failed = await fetch(url, withPayment(turnInit(alice, turn), header));
    expect(await failed.json()).toMatchObject({ error: { code: 'upstream_error' }, retryable: true });
    expect((await call(alice, 'GET', `/v1/conversations/${conv.body.id}/items`)).body.data).toEqual([]);
    expect((await fetch(url, withPayment(turnInit(alice, turn), header))).status).toBe(200);
    expect((await call(alice, 'GET', `/v1/conversations/${conv.body.id}/items`)).body.data).toHaveLength(2);
  });

  it('streams a turn, stores it once when the stream completes, and stores nothing for a cut stream', async () => {
    const conv = await call(alice, 'POST', '/v1/conversations', { model: 'fake-chat' });
    const id = conv.body.id as string;
    const url = `${h.baseUrl}/v1/conversations/${id}/messages`;
    const turn = { content: 'stream a turn', stream: true, max_tokens: 4 };
    const { requirement } = await challenge(url, turnInit(alice, turn));
    const { header } = await payFor(payer, requirement);
    const events = async (res: Response) =>
      (await res.text())
        .split('\n\n')
        .filter((e) => e.startsWith('data: '))
        .map((e) => e.slice(6));

    h.fake.queue.push('cut');
    const cut = await events(await fetch(url, withPayment(turnInit(alice, turn), header)));
    expect(JSON.parse(cut.at(-1)!)).toMatchObject({ error: { retryable: true } });
    expect((await call(alice, 'GET', `/v1/conversations/${id}/items`)).body.data).toEqual([]);

    const res = await fetch(url, withPayment(turnInit(alice, turn), header));
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const ok = await events(res);
    expect(ok.at(-1)).toBe('[DONE]');
    const last = JSON.parse(ok.at(-2)!) as Json;
    expect(last.conversation_id).toBe(id);
    expect(last.items.map((i: Json) => i.content[0].text)).toEqual(['stream a turn', 'Hello from the fake']);
    expect(last.items[1].usage).toMatchObject({ completion_tokens: 4 });

    const replay = await fetch(url, withPayment(turnInit(alice, turn), header));
    expect(await events(replay)).toEqual(ok);
    expect((await call(alice, 'GET', `/v1/conversations/${id}/items`)).body.data).toHaveLength(2);
  });
});
