/**
 * Paid chat completions end to end: the quote follows the documented formula, the
 * upstream gets the clamped max_tokens, usage and the receipt come back, a proof
 * works only for its own body, and an upstream failure (before or during a stream)
 * leaves the same proof usable.
 */
import type { PaymentWallet } from '@tollgate/client';
import { decodePaymentReceipt, type PaymentRequirement } from '@tollgate/protocol';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { challenge, payFor, withPayment } from '../support/x402.ts';
import { FAKE_PROMPT_TOKENS } from './fake-openai.ts';
import { type InferenceHarness, PRICING_DATE, startInferenceHarness } from './inference-harness.ts';

let h: InferenceHarness;
let payer: PaymentWallet;
beforeAll(async () => {
  // A short lease, so a slow upstream outlives it unless the gateway renews it.
  h = await startInferenceHarness({ env: { TOLLGATE_LEASE_MS: '1000' } });
  payer = await h.newPayer('solana', '5');
});
afterAll(async () => {
  await h?.close();
});

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const url = () => `${h.baseUrl}/v1/chat/completions`;

/** OpenAI's framing, counted independently of the gateway: 3 + Σ(3 + role + content). */
function promptTokens(messages: { role: string; content: string }[]): number {
  return 3 + messages.reduce((n, m) => n + 3 + encode(m.role).length + encode(m.content).length, 0);
}

async function paidCall(
  body: unknown,
): Promise<{ requirement: PaymentRequirement; header: string; res: Response }> {
  const { requirement } = await challenge(url(), post(body));
  const { header } = await payFor(payer, requirement);
  const res = await fetch(url(), withPayment(post(body), header));
  return { requirement, header, res };
}

async function sseEvents(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));
}

describe('POST /v1/chat/completions', () => {
  it('quotes prompt × input price + clamped max_tokens × output price, plus the fee, as one platform split', async () => {
    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Name three colours of the rainbow.' },
    ];
    const { res, requirement } = await challenge(
      url(),
      post({ model: 'fake-chat', messages, max_tokens: 500 }),
    );
    expect(res.headers.get('cache-control')).toBe('no-store');
    const p = promptTokens(messages);
    // $3/M input = 3 atomic per token; $15/M output = 15 per token; max_tokens 500 clamps to 50.
    const price = BigInt(p) * 3n + 50n * 15n;
    const fee = 1000n; // 10% of the price is below the 0.001 minimum
    const fmt = (a: bigint) => (Number(a) / 1e6).toFixed(6).replace(/0+$/, '');
    expect(requirement).toMatchObject({
      error: 'payment_required',
      x402Version: 1,
      scheme: 'exact',
      resource: 'POST /v1/chat/completions',
      cost: {
        inference: { amount: fmt(price), asset: 'USDC' },
        total: { amount: fmt(price + fee), asset: 'USDC' },
        pricingSourceVersion: PRICING_DATE,
      },
    });
    expect(requirement.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(requirement.accepts.map((a) => a.chain)).toEqual(['sui', 'solana']);
    for (const a of requirement.accepts) {
      expect(a.totalAmount).toBe(fmt(price + fee));
      expect(a.splits).toEqual([
        { recipientType: 'platform', payTo: h.recipients[a.chain].platform, amount: fmt(price + fee) },
      ]);
    }
  });

  it('rounds a fractional price up to one atomic unit', async () => {
    // 0.1 atomic per token: 7 tokens of embeddings input cost 0.7 → 1 atomic unit.
    const { requirement } = await challenge(
      `${h.baseUrl}/v1/embeddings`,
      post({ model: 'fake-embed', input: 'one two three four five six' }),
    );
    const tokens = encode('one two three four five six').length;
    expect(requirement.cost?.inference).toEqual({
      amount: (Math.ceil(tokens / 10) / 1e6).toFixed(6).replace(/0+$/, ''),
      asset: 'USDC',
    });
  });

  it('serves a paid request with real usage and a receipt, sending the clamped max_tokens upstream', async () => {
    const body = { model: 'fake-chat', messages: [{ role: 'user', content: 'Hello?' }], max_tokens: 5000 };
    const { res } = await paidCall(body);
    expect(res.status).toBe(200);
    const completion = (await res.json()) as {
      model: string;
      usage: Record<string, number>;
      choices: { message: { content: string } }[];
    };
    expect(completion.model).toBe('fake-chat');
    expect(completion.usage).toEqual({
      prompt_tokens: FAKE_PROMPT_TOKENS,
      completion_tokens: 7,
      total_tokens: FAKE_PROMPT_TOKENS + 7,
    });
    expect(completion.choices[0]?.message.content).toBe('Hello from the fake upstream model.');
    const receipt = decodePaymentReceipt(res.headers.get('x-payment-response')!);
    expect(receipt).toMatchObject({ success: true, chain: 'solana', payer: payer.address });
    const sent = h.fake.received.at(-1)!;
    expect(sent.body.max_tokens).toBe(50);
    expect(sent.body.model).toBe('vendor/fake-chat-large');
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(sent.headers['x-payment']).toBeUndefined();
  });

  it('replays a delivered answer for the same proof without calling the upstream again', async () => {
    const body = { model: 'fake-chat', messages: [{ role: 'user', content: 'Replay me' }], max_tokens: 3 };
    const { res, header } = await paidCall(body);
    const first = await res.text();
    const calls = h.fake.received.length;
    const again = await fetch(url(), withPayment(post(body), header));
    expect(again.status).toBe(200);
    expect(again.headers.get('x-tollgate-replay')).toBe('true');
    expect(await again.text()).toBe(first);
    expect(h.fake.received.length).toBe(calls);
  });

  it('refuses a proof paid for one body on another body', async () => {
    const a = { model: 'fake-chat', messages: [{ role: 'user', content: 'cheap question' }], max_tokens: 1 };
    const b = { model: 'fake-chat', messages: [{ role: 'user', content: 'cheap question' }], max_tokens: 50 };
    const { requirement } = await challenge(url(), post(a));
    const { header } = await payFor(payer, requirement);
    const calls = h.fake.received.length;
    const res = await fetch(url(), withPayment(post(b), header));
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ error: 'payment_required', reason: 'request_mismatch' });
    expect(h.fake.received.length).toBe(calls);
    // The payment still works for the body it was made for.
    expect((await fetch(url(), withPayment(post(a), header))).status).toBe(200);
  });

  it('keeps the proof usable when the upstream fails before answering', async () => {
    const body = { model: 'fake-chat', messages: [{ role: 'user', content: 'fail first' }] };
    const { requirement } = await challenge(url(), post(body));
    const { header } = await payFor(payer, requirement);
    h.fake.queue.push('fail500');
    const failed = await fetch(url(), withPayment(post(body), header));
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({
      error: { code: 'upstream_error', retryable: true, upstreamStatus: 500 },
      retryable: true,
    });
    expect(decodePaymentReceipt(failed.headers.get('x-payment-response')!).success).toBe(false);
    const retried = await fetch(url(), withPayment(post(body), header));
    expect(retried.status).toBe(200);
    expect(h.fake.received.at(-1)?.body.max_tokens).toBe(20); // the model's documented default
  });

  it('does not deliver a 200 that is not a completion, and keeps the proof usable', async () => {
    const body = {
      model: 'fake-chat',
      messages: [{ role: 'user', content: 'garbage first' }],
      max_tokens: 2,
    };
    const { requirement } = await challenge(url(), post(body));
    const { header } = await payFor(payer, requirement);
    h.fake.queue.push('no_choices');
    const bad = await fetch(url(), withPayment(post(body), header));
    expect(await bad.json()).toMatchObject({
      error: { code: 'upstream_error', retryable: true, reason: 'bad_response' },
    });
    expect((await fetch(url(), withPayment(post(body), header))).status).toBe(200);
  });

  it('gives the payment back when serving throws, so the same proof retries at once', async () => {
    const body = {
      model: 'fake-chat',
      messages: [{ role: 'user', content: 'throw first' }],
      max_tokens: 2,
    };
    const { requirement } = await challenge(url(), post(body));
    const { header } = await payFor(payer, requirement);
    const chat = h.deps.inference.chat;
    h.deps.inference.chat = () => Promise.reject(new Error('upstream construction failed'));
    let broken: Response;
    try {
      broken = await fetch(url(), withPayment(post(body), header));
    } finally {
      h.deps.inference.chat = chat;
    }
    expect(broken.status).toBe(500);
    // Without the release the lease would still be held: payment_in_progress until it ran out.
    expect((await fetch(url(), withPayment(post(body), header))).status).toBe(200);
  });

  it('holds the payment for a slow upstream past the lease length, so a concurrent retry cannot run it twice', async () => {
    const body = {
      model: 'fake-chat',
      messages: [{ role: 'user', content: 'take your time' }],
      max_tokens: 2,
    };
    const { requirement } = await challenge(url(), post(body));
    const { header } = await payFor(payer, requirement);
    h.fake.queue.push('slow');
    h.fake.slowMs = 1800;
    const calls = h.fake.received.length;
    const first = fetch(url(), withPayment(post(body), header));
    await new Promise((r) => setTimeout(r, 1400));
    const concurrent = await fetch(url(), withPayment(post(body), header));
    expect(concurrent.status).toBe(409);
    expect(await concurrent.json()).toMatchObject({
      error: { code: 'payment_in_progress', retryable: true },
    });
    expect((await first).status).toBe(200);
    expect(h.fake.received.length).toBe(calls + 1);
  });

  it('streams SSE with usage in the final chunk, and replays the same stream', async () => {
    const body = {
      model: 'fake-chat',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
      max_tokens: 4,
    };
    const { res, header } = await paidCall(body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-payment-response')).toBeTruthy();
    const events = await sseEvents(res);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events
      .slice(0, -1)
      .map(
        (e) =>
          JSON.parse(e) as { model: string; usage?: unknown; choices: { delta: { content?: string } }[] },
      );
    expect(chunks.every((c) => c.model === 'fake-chat')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello from the fake');
    expect(chunks.at(-1)?.usage).toEqual({
      prompt_tokens: FAKE_PROMPT_TOKENS,
      completion_tokens: 4,
      total_tokens: FAKE_PROMPT_TOKENS + 4,
    });
    expect(h.fake.received.at(-1)?.body.stream_options).toEqual({ include_usage: true });
    const replay = await fetch(url(), withPayment(post(body), header));
    expect(await sseEvents(replay)).toEqual(events);
  });

  it('ends a stream cut by the upstream with an error event, and the same proof then gets the whole stream', async () => {
    const body = { model: 'fake-chat', messages: [{ role: 'user', content: 'cut me' }], stream: true };
    const { requirement } = await challenge(url(), post(body));
    const { header } = await payFor(payer, requirement);
    h.fake.queue.push('cut');
    const cut = await fetch(url(), withPayment(post(body), header));
    expect(cut.status).toBe(200);
    const cutEvents = await sseEvents(cut);
    expect(cutEvents).not.toContain('[DONE]');
    expect(JSON.parse(cutEvents.at(-1)!)).toMatchObject({
      error: { code: 'upstream_error', retryable: true },
    });
    const again = await fetch(url(), withPayment(post(body), header));
    expect(again.status).toBe(200);
    const events = await sseEvents(again);
    expect(events.at(-1)).toBe('[DONE]');
    expect(again.headers.get('x-tollgate-replay')).toBeNull();
  });

  it('a paid stream the client leaves midway is still generated once, stored and replayed whole', async () => {
    const body = { model: 'fake-chat', messages: [{ role: 'user', content: 'leave early' }], stream: true };
    const { requirement } = await challenge(url(), post(body));
    const { header } = await payFor(payer, requirement);
    const before = h.fake.received.length;
    h.fake.queue.push('drip');
    const ctrl = new AbortController();
    const res = await fetch(url(), { ...withPayment(post(body), header), signal: ctrl.signal });
    expect(res.status).toBe(200);
    await res.body!.getReader().read();
    ctrl.abort();
    // The generation goes on without the client; the same proof then replays it whole.
    let replay = await fetch(url(), withPayment(post(body), header));
    for (let i = 0; i < 30 && replay.status === 409; i++) {
      await replay.arrayBuffer();
      await new Promise((r) => setTimeout(r, 200));
      replay = await fetch(url(), withPayment(post(body), header));
    }
    expect(replay.status).toBe(200);
    expect(replay.headers.get('x-tollgate-replay')).toBe('true');
    const events = await sseEvents(replay);
    expect(events.at(-1)).toBe('[DONE]');
    const text = events
      .slice(0, -1)
      .map(
        (e) =>
          (JSON.parse(e) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content ?? '',
      )
      .join('');
    expect(text).toBe('Hello from the fake upstream model.');
    expect(h.fake.received.length).toBe(before + 1);
  });

  it('reports usage counted by the gateway when the upstream sends none', async () => {
    h.fake.queue.push('no_usage');
    const { res } = await paidCall({
      model: 'fake-chat',
      messages: [{ role: 'user', content: 'no usage' }],
      max_tokens: 2,
    });
    const completion = (await res.json()) as { usage: Record<string, number> };
    expect(completion.usage.completion_tokens).toBe(encode('Hello from').length);
    expect(completion.usage.prompt_tokens).toBe(promptTokens([{ role: 'user', content: 'no usage' }]));
  });

  it('rejects an unknown model with 404 model_not_found and a malformed body with 400, never 402', async () => {
    const unknown = await fetch(url(), post({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'model_not_found' } });
    for (const bad of [
      { model: 'fake-chat' },
      { model: 'fake-chat', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 },
      { model: 'fake-chat', messages: [{ role: 'user', content: 'x' }], plugins: [{ id: 'web' }] },
      {
        model: 'fake-chat',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }],
      },
    ]) {
      const res = await fetch(url(), post(bad));
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_request' } });
    }
    const notJson = await fetch(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(notJson.status).toBe(400);
    const tooLong = await fetch(
      url(),
      post({ model: 'fake-chat', messages: [{ role: 'user', content: 'word '.repeat(1200) }] }),
    );
    expect(await tooLong.json()).toMatchObject({
      error: { code: 'invalid_request', reason: 'context_length_exceeded' },
    });
  });
});
