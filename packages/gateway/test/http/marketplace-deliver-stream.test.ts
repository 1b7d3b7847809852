/**
 * streamAndSettle's streaming path (a paid answer of unknown length) when the upstream fails
 * while a v2 payment is being sent: the body is then unread, so its failure waits on it.
 */
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { streamAndSettle } from '../../src/http/marketplace-deliver.ts';
import type { PaidRequest, RetryTerms } from '../../src/payments/settle.ts';
import { UpstreamError } from '../../src/proxy/upstream-error.ts';

function paidWhoseCommit(commit: () => Promise<boolean>) {
  const seen = { failed: [] as string[], delivered: 0 };
  const terms: RetryTerms = { retryAfterSec: 30, countsForHealth: true, headers: { 'retry-after': '30' } };
  const paid = {
    receiptHeaders: { 'x-payment-response': 'r' },
    settlementFailure: null,
    commit,
    async fail(reason: string) {
      seen.failed.push(reason);
      return terms;
    },
    async deliver() {
      seen.delivered++;
    },
  } as unknown as PaidRequest;
  return { paid, seen };
}

describe('a paid streamed answer', () => {
  it('is given back for a retry when the upstream failed while the payment was being sent', async () => {
    const body = new Readable({ read() {} });
    body.push('the first part');
    // As forward() leaves a body nobody reads yet: its failure is kept on it, not thrown.
    body.on('error', () => {});
    const { paid, seen } = paidWhoseCommit(async () => {
      body.destroy(new UpstreamError('upstream_error', 'UND_ERR_SOCKET', 'other side closed'));
      return true;
    });
    const app = Fastify();
    app.get('/x', (_req, reply) =>
      streamAndSettle(reply, 200, { 'content-type': 'text/plain' }, body, paid, 1 << 20),
    );
    const answered = app.inject({ method: 'GET', url: '/x' });
    const res = await Promise.race([
      answered,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('no answer: the request hangs')), 3000),
      ),
    ]);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ error: 'upstream_error', reason: 'UND_ERR_SOCKET', retryable: true });
    expect(res.headers['retry-after']).toBe('30');
    expect(seen).toEqual({ failed: ['UND_ERR_SOCKET'], delivered: 0 });
    await app.close();
  });
});
