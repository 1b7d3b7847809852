/**
 * A tool call is one request against the caller's rate limit: the gateway's own route
 * that serves it in-process is not counted a second time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const LIMIT = 3;
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ env: { TOLLGATE_RATE_LIMIT_PER_MIN: String(LIMIT) } });
});
afterAll(async () => {
  await h?.close();
});

const call = (id: number) =>
  fetch(`${h.baseUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: `${h.project.slug}__get_items`, arguments: {} },
    }),
  });

it('counts each tool call once: the limit allows as many calls as it allows requests', async () => {
  for (let i = 1; i <= LIMIT; i++) {
    const res = await call(i);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result: { isError?: boolean; structuredContent?: unknown } };
    // The unpaid call's answer is the payment requirement, not a rate-limit refusal.
    expect({ call: i, content: body.result.structuredContent }).toMatchObject({
      call: i,
      content: { x402Version: 2, error: 'payment_required' },
    });
  }
  const over = await call(LIMIT + 1);
  expect(over.status).toBe(429);
  // The in-process marker cannot be forged from outside.
  const forged = await fetch(`${h.baseUrl}/p/${h.project.slug}/items`, {
    headers: { 'x-tollgate-inner-call': '0'.repeat(32) },
  });
  expect(forged.status).toBe(429);
});

describe('a JSON-RPC batch of tool calls', () => {
  let b: Harness;
  beforeAll(async () => {
    b = await startHarness({ env: { TOLLGATE_RATE_LIMIT_PER_MIN: String(LIMIT) } });
  });
  afterAll(async () => {
    await b?.close();
  });

  it('costs one request per tool call, not one for the whole batch', async () => {
    const batch = Array.from({ length: LIMIT }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: `${b.project.slug}__get_items`, arguments: {} },
    }));
    const res = await fetch(`${b.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(batch),
    });
    expect(res.status).toBe(200);
    const answers = (await res.json()) as { result: { structuredContent?: { error?: string } } }[];
    expect(answers).toHaveLength(LIMIT);
    // The first call came with the outer request; the others took a token each: the limit is spent.
    expect(answers.map((a) => a.result.structuredContent?.error)).toEqual([
      'payment_required',
      'payment_required',
      'payment_required',
    ]);
    const after = await fetch(`${b.baseUrl}/p/${b.project.slug}/items`);
    expect(after.status).toBe(429);
  });

  it('answers a marker of bytes above 0x7f like any other request, never 500', async () => {
    const res = await fetch(`${b.baseUrl}/v1/models`, {
      headers: { 'x-tollgate-inner-call': '\u00e9'.repeat(32) },
    });
    expect(res.status).not.toBe(500);
  });
});
