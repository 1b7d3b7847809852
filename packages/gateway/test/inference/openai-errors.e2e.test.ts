/**
 * Errors on the OpenAI-style `/v1` routes, as the official `openai` SDK shows them: the
 * OpenAI envelope `{ error: { message, type, code, param, … }, requestId }` so the SDK's
 * message is the gateway's; the 402 payment requirement stays as SPEC §2.1/§7 say; and
 * payFetch's own refusals (spend cap) and undelivered payments reach the SDK as
 * `APIError`s with a code, not as "Connection error.". Other routes keep Tollgate's
 * flat `{ error: code, message, requestId }`.
 */
import { readFileSync } from 'node:fs';
import { type PayEvent, type PayFetchOptions, ProtocolError, payFetch } from '@tollgate/client';
import { ERROR_STATUS } from '@tollgate/protocol';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAI_ERROR_TYPE, OPENAI_ROUTE_SEGMENTS, TOLLGATE_ROUTE_SEGMENTS } from '../../src/errors.ts';
import { servedRoutes } from '../support/doc-routes.ts';
import { type InferenceHarness, startInferenceHarness } from './inference-harness.ts';

let h: InferenceHarness;
beforeAll(async () => {
  h = await startInferenceHarness();
});
afterAll(async () => {
  await h?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: the tests read error bodies loosely
type Json = Record<string, any>;

/** The SDK without a paying fetch: fine for every answer that comes before a 402. */
const plainClient = (apiKey = 'not-used') =>
  new OpenAI({ baseURL: `${h.baseUrl}/v1`, apiKey, maxRetries: 0 });

async function payingClient(opts: Partial<PayFetchOptions> = {}) {
  const events: PayEvent[] = [];
  const wallet = await h.newPayer('solana', '1');
  const fetch = payFetch(globalThis.fetch, {
    wallets: [wallet],
    onEvent: (e) => events.push(e),
    ...opts,
  });
  return {
    client: new OpenAI({ baseURL: `${h.baseUrl}/v1`, apiKey: 'not-used', fetch, maxRetries: 0 }),
    fetch,
    events,
  };
}

/** The error a call rejects with (fails the test if it resolves). */
async function rejection(p: Promise<unknown>): Promise<Json> {
  try {
    await p;
  } catch (e) {
    return e as Json;
  }
  throw new Error('expected the call to fail');
}

const hello = { model: 'tollgate-dev-chat', messages: [{ role: 'user' as const, content: 'Hi' }] };

describe('the openai SDK shows the gateway’s errors', () => {
  it('a 400 with its message, code, type and param', async () => {
    const err = await rejection(
      plainClient().chat.completions.create({
        ...hello,
        functions: [{ name: 'f', parameters: {} }],
      }),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toBe('400 unsupported parameter: functions; use `tools`');
    expect(err).toMatchObject({
      status: 400,
      code: 'invalid_request',
      type: 'invalid_request_error',
      param: 'functions',
    });
    expect(err.requestID).toMatch(/^req_/);
  });

  it('a 400 for an invalid message, naming the field', async () => {
    const err = await rejection(
      plainClient().chat.completions.create({
        model: 'tollgate-dev-chat',
        messages: [{ role: 'wizard', content: 'x' }],
      } as never),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toMatch(/^400 messages\.0\.role: /);
    expect(err.param).toBe('messages.0.role');
  });

  it('a 404 for an unknown model, on chat and on models.retrieve', async () => {
    const chat = await rejection(plainClient().chat.completions.create({ ...hello, model: 'no-such-model' }));
    expect(chat).toBeInstanceOf(OpenAI.NotFoundError);
    expect(chat.message).toBe('404 the model "no-such-model" does not exist');
    expect(chat).toMatchObject({ code: 'model_not_found', type: 'not_found_error', param: 'model' });

    const retrieve = await rejection(plainClient().models.retrieve('no-such-model'));
    expect(retrieve).toBeInstanceOf(OpenAI.NotFoundError);
    expect(retrieve).toMatchObject({ code: 'model_not_found', type: 'not_found_error' });
  });

  it('a 401 on conversations with a token that is not one', async () => {
    const err = await rejection(plainClient('not-a-token').conversations.create({}));
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err).toMatchObject({ code: 'unauthorized', type: 'authentication_error' });
    expect(err.message).toMatch(/^401 \S/);
  });

  it('a paid upstream failure keeps retryable, reason and upstreamStatus machine-readable', async () => {
    h.fake.queue.push('fail500', 'fail500');
    const { client, events } = await payingClient({ maxRetries: 1, maxRetryDelayMs: 10 });
    const body = { model: 'fake-chat', messages: [{ role: 'user' as const, content: 'fail twice' }] };
    const err = await rejection(client.chat.completions.create(body));
    expect(err).not.toBeInstanceOf(OpenAI.APIConnectionError);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(502);
    expect(err.code).toBe('payment_failed');
    expect(err.type).toBe('payment_error');
    expect(err.message).toMatch(/^502 paid, but not delivered after 2 attempt\(s\): .*upstream_error/);
    const proof = events.find((e) => e.type === 'paid')?.proof;
    expect(err.error).toMatchObject({ gatewayError: 'upstream_error', retryable: true, proof });

    // The same proof, sent again through the SDK, delivers without paying again.
    const again = await client.chat.completions.create(body, { headers: { 'X-PAYMENT': proof! } });
    expect(again.choices[0]?.message.content).toContain('Hello');
    expect(events.filter((e) => e.type === 'paid')).toHaveLength(1);
  });
});

describe('the error bodies on the wire', () => {
  it('/v1 inference errors use the OpenAI envelope', async () => {
    const res = await fetch(`${h.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...hello, model: 'nope' }),
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as Json;
    expect(body).toEqual({
      error: {
        message: 'the model "nope" does not exist',
        type: 'not_found_error',
        code: 'model_not_found',
        param: 'model',
      },
      requestId: res.headers.get('x-request-id'),
    });
  });

  it('a paid retryable failure carries retryable inside error and at the top level', async () => {
    h.fake.queue.push('fail500');
    const { fetch: pay, events } = await payingClient({ maxRetries: 0 });
    const res = await rejection(
      pay(`${h.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-chat', messages: [{ role: 'user', content: 'fail once' }] }),
      }),
    );
    // A plain fetch caller (no SDK headers) still gets the thrown UndeliveredPaymentError.
    expect(res).toBeInstanceOf(ProtocolError);
    expect(res.code).toBe('payment_failed');
    expect(res.gatewayError).toBe('upstream_error');
    const proof = events.find((e) => e.type === 'paid')?.proof as string;
    h.fake.queue.push('fail500');
    const raw = await fetch(`${h.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-payment': proof },
      body: JSON.stringify({ model: 'fake-chat', messages: [{ role: 'user', content: 'fail once' }] }),
    });
    expect(raw.status).toBe(502);
    expect(await raw.json()).toMatchObject({
      error: {
        code: 'upstream_error',
        type: 'upstream_error',
        param: null,
        retryable: true,
        reason: 'status_500',
        upstreamStatus: 500,
      },
      retryable: true,
      requestId: expect.stringMatching(/^req_/),
    });
  });

  it('the 402 keeps the SPEC body; the SDK without payFetch shows 402 "payment_required"', async () => {
    const res = await fetch(`${h.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(hello),
    });
    expect(res.status).toBe(402);
    expect(await res.json()).toMatchObject({ error: 'payment_required', scheme: 'exact' });

    const err = await rejection(plainClient().chat.completions.create(hello));
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(402);
    expect(err.message).toBe('402 "payment_required"');
  });

  it('an unknown route under /v1 answers in the envelope', async () => {
    const res = await fetch(`${h.baseUrl}/v1/responses`, { method: 'POST' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found', type: 'not_found_error' } });
  });

  it('the provider API, sign-in and /p keep the flat body', async () => {
    for (const [method, path, status, code] of [
      ['GET', '/v1/projects', 401, 'unauthorized'],
      ['GET', '/v1/auth/session', 401, 'unauthorized'],
      ['GET', '/v1/directory/apis/no-such-api', 404, 'not_found'],
      ['GET', '/p/no-such-project/x', 404, 'endpoint_not_found'],
      ['GET', '/nowhere', 404, 'not_found'],
    ] as const) {
      const res = await fetch(`${h.baseUrl}${path}`, { method });
      const body = (await res.json()) as Json;
      expect([path, res.status, body.error, typeof body.message]).toEqual([path, status, code, 'string']);
    }
  });

  it('every /v1 route is classified as OpenAI-style or Tollgate-style', async () => {
    const served = await servedRoutes(['/v1/']);
    const segments = new Set(served.map((r) => r.split(' ')[1]!.split('/')[2]!));
    for (const s of segments) {
      expect([s, OPENAI_ROUTE_SEGMENTS.has(s) || TOLLGATE_ROUTE_SEGMENTS.has(s)]).toEqual([s, true]);
      expect([s, OPENAI_ROUTE_SEGMENTS.has(s) && TOLLGATE_ROUTE_SEGMENTS.has(s)]).toEqual([s, false]);
    }
  });

  it('docs/errors.md gives each code its OpenAI type', () => {
    const doc = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');
    const rows = doc
      .split('\n')
      .filter((l) => /^\| `[a-z_]+` \| \d{3} \|/.test(l))
      .map((l) => l.split('|').map((c) => c.trim().replaceAll('`', '')));
    const documented = Object.fromEntries(rows.map((r) => [r[1], r[3]]));
    expect(documented).toEqual(OPENAI_ERROR_TYPE);
    expect(Object.keys(OPENAI_ERROR_TYPE).sort()).toEqual(Object.keys(ERROR_STATUS).sort());
  });
});

describe('payFetch refusals reach the SDK as API errors, not connection errors', () => {
  it('a price above maxPerRequest: 402 payment_limit_exceeded, nothing paid', async () => {
    const { client, events } = await payingClient({ maxPerRequest: '0.0001' });
    const err = await rejection(client.chat.completions.create(hello));
    expect(err).not.toBeInstanceOf(OpenAI.APIConnectionError);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err).toMatchObject({ status: 402, code: 'payment_limit_exceeded', type: 'payment_error' });
    expect(err.message).toMatch(/^402 price 0\.\d+ USDC exceeds the per-request limit 0\.0001 USDC$/);
    expect(events.some((e) => e.type === 'paying')).toBe(false);
  });

  it('a session cap: the second call is refused with payment_limit_exceeded', async () => {
    const { client, fetch } = await payingClient({ maxPerSession: '0.0015' });
    await client.chat.completions.create(hello);
    const err = await rejection(client.chat.completions.create(hello));
    expect(err).toMatchObject({ status: 402, code: 'payment_limit_exceeded' });
    expect(err.message).toContain('would exceed the session limit 0.0015');
    expect(fetch.spent).toBeLessThanOrEqual(1500n);
  });

  it('errorsAsResponses: false keeps throwing: the SDK wraps it, the ProtocolError is its cause', async () => {
    const { client } = await payingClient({ maxPerRequest: '0.0001', errorsAsResponses: false });
    const err = await rejection(client.chat.completions.create(hello));
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(err.cause).toBeInstanceOf(ProtocolError);
    expect(err.cause.code).toBe('payment_limit_exceeded');
  });
});
