/**
 * Paid inference in the logs and metrics (issue 12): the chat route's 402 and paid
 * delivery each have an access-log line (route family, chain, tx, payer, amount,
 * outcome), the upstream's latency is timed, and the model upstream's API key, the
 * proof and the operator token appear in no line.
 */
import { parseAmount } from '@tollgate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { challenge, payFor, withPayment } from '../support/x402.ts';
import { type InferenceHarness, startInferenceHarness } from './inference-harness.ts';

let h: InferenceHarness;
const lines: string[] = [];
beforeAll(async () => {
  h = await startInferenceHarness({ env: { LOG_LEVEL: 'info' }, logLines: lines });
});
afterAll(async () => {
  await h?.close();
});

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

async function lineOf(res: Response): Promise<Record<string, unknown>> {
  const id = res.headers.get('x-request-id');
  for (let i = 0; i < 100; i++) {
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.reqId === id);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no access-log line for ${id}`);
}

describe('paid chat completions in the logs and metrics', () => {
  it('logs the 402 and the paid delivery, times the upstream, and logs no secret', async () => {
    const url = `${h.baseUrl}/v1/chat/completions`;
    const body = post({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    const { res: quoted, requirement } = await challenge(url, body);
    expect(await lineOf(quoted)).toMatchObject({
      level: 30,
      status: 402,
      code: 'payment_required',
      route: 'chat',
      path: '/v1/chat/completions',
    });

    const payer = await h.newPayer('solana', '1');
    const { header, tx, option } = await payFor(payer, requirement);
    const res = await fetch(url, withPayment(body, header));
    expect(res.status).toBe(200);
    const total = option.splits.reduce((sum, x) => sum + parseAmount(x.amount, option.decimals), 0n);
    expect(await lineOf(res)).toMatchObject({
      level: 30,
      status: 200,
      route: 'chat',
      format: 'v1',
      chain: 'solana',
      tx,
      payer: payer.address,
      amount: String(total),
      outcome: 'delivered',
    });

    const metrics = await (
      await fetch(`${h.baseUrl}/metrics`, { headers: { authorization: `Bearer ${h.config.adminToken}` } })
    ).text();
    expect(metrics).toMatch(/^tollgate_upstream_duration_seconds_count\{upstream="chat",outcome="ok"\} 1$/m);
    expect(metrics).toMatch(/^tollgate_payment_required_total\{route="chat"\} 1$/m);

    const all = lines.join('\n');
    for (const secret of ['sk-upstream-secret', header, h.config.adminToken!])
      expect(all).not.toContain(secret);
  });
});
