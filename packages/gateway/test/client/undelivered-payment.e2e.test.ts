/**
 * Paid means delivered exactly once, from the payer's side, against the real gateway:
 * when the upstream keeps failing, payFetch gives up and hands the proof back; once the
 * upstream recovers, retryWithProof delivers the same request with that proof, and the
 * payer has paid once.
 */
import { payFetch, retryWithProof, UndeliveredPaymentError } from '@tollgate/client';
import { decodePaymentReceipt } from '@tollgate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('a paid request the upstream could not serve', () => {
  it.each(['solana', 'sui'] as const)(
    'comes back as a proof (%s) that delivers later, paid once',
    async (chain) => {
      const wallet = await h.newPayer(chain, '1');
      const before = await h.chains[chain].usdcBalance(wallet.address);
      const url = `${h.baseUrl}/p/${h.project.slug}/orders/new?ref=${chain}`;
      const body = JSON.stringify({ sku: 'äpple', qty: 1 });
      h.upstream.mode = 'fail500';
      const pay = payFetch(fetch, { wallets: [wallet], maxRetries: 1, maxRetryDelayMs: 50 });
      const err = await pay(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UndeliveredPaymentError);
      const { request } = err as UndeliveredPaymentError;
      expect(request).toMatchObject({ url, method: 'POST' });
      expect(pay.spent).toBe(22_000n); // 0.02 + the 10% fee
      expect(await h.chains[chain].usdcBalance(wallet.address)).toBe(before - 22_000n);

      h.upstream.mode = 'ok';
      const delivered = h.upstream.calls('/base/orders/new').length;
      const res = await retryWithProof(fetch, request, { maxRetries: 10, maxRetryDelayMs: 3000 });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, body });
      expect(decodePaymentReceipt(res.headers.get('x-payment-response'))).toMatchObject({
        success: true,
        payer: wallet.address,
      });
      expect(h.upstream.calls('/base/orders/new')).toHaveLength(delivered + 1);

      // Once delivered, the same proof gets the stored answer; the upstream is not called again.
      const again = await retryWithProof(fetch, request);
      expect(again.status).toBe(200);
      expect(again.headers.get('x-tollgate-replay')).toBe('true');
      expect(h.upstream.calls('/base/orders/new')).toHaveLength(delivered + 1);
      expect(await h.chains[chain].usdcBalance(wallet.address)).toBe(before - 22_000n);
    },
    30_000,
  );
});
