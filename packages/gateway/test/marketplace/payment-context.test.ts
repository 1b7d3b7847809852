/**
 * Payment context for origins (issue 13): after a real paid request on each sandbox
 * chain the origin received who paid and how much, signed with its origin secret; the
 * documented verification accepts them and refuses a tampered value; `X-Tollgate-*`
 * headers a client sends never reach the origin, paid or free.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { payFetch } from '@tollgate/client';
import { decodePaymentReceipt } from '@tollgate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishProject } from '../../src/marketplace/publish.ts';
import { verifyPaymentContext } from '../../src/providers/payment-context.ts';
import { type Harness, startHarness, UPSTREAM_KEY } from '../support/gateway-harness.ts';

let h: Harness;
let snippetDir: string;
/** The verification snippet of docs/provider-api.md, loaded as the module a provider would paste. */
let verifyTollgate: (
  req: { headers: Record<string, unknown>; method: string; url: string },
  secret: string,
) => Record<string, string> | null;

async function loadDocsSnippet() {
  const doc = readFileSync(new URL('../../../../docs/provider-api.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Payment context headers'));
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('no js snippet under "Payment context headers" in docs/provider-api.md');
  snippetDir = mkdtempSync(join(tmpdir(), 'tollgate-snippet-'));
  const file = join(snippetDir, 'verify.mjs');
  writeFileSync(file, code);
  ({ verifyTollgate } = await import(pathToFileURL(file).href));
}

beforeAll(async () => {
  await loadDocsSnippet();
  // No minimum fee, so the `free` endpoint is really free (no payment at all).
  h = await startHarness({ env: { PLATFORM_FEE_MIN: '0' } });
});
afterAll(async () => {
  await h?.close();
  if (snippetDir) rmSync(snippetDir, { recursive: true, force: true });
});

const tollgateHeaders = (headers: Record<string, unknown>) =>
  Object.keys(headers).filter((k) => k.startsWith('x-tollgate-'));

describe('payment context headers at the origin', () => {
  for (const chain of ['solana', 'sui'] as const) {
    it(`after a paid request on ${chain}, the origin gets signed payer, chain, tx, amount and requirement`, async () => {
      const wallet = await h.newPayer(chain, '1');
      const pay = payFetch(fetch, { wallets: [wallet] });
      const res = await pay(`${h.baseUrl}/p/${h.project.slug}/orders/new?ref=a%20b`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          // A client trying to pass itself off as someone else, to the origin.
          'x-tollgate-payer': 'forged-payer',
          'X-Tollgate-Amount': '1000',
          'x-tollgate-signature': 'v1=00',
        },
        body: '{"sku":"x"}',
      });
      expect(res.status).toBe(200);
      const receipt = decodePaymentReceipt(res.headers.get('x-payment-response'));
      const seen = h.upstream.calls('/base/orders/new').at(-1)!;
      expect(seen.headers).toMatchObject({
        'x-tollgate-payer': wallet.address,
        'x-tollgate-chain': chain,
        'x-tollgate-network': 'localnet',
        'x-tollgate-tx': receipt.txHashOrDigest,
        'x-tollgate-amount': '0.022',
        'x-tollgate-requirement': receipt.paymentRequirementId,
        'x-tollgate-signature': expect.stringMatching(/^v1=[0-9a-f]{64}$/),
      });
      expect(tollgateHeaders(seen.headers).sort()).toEqual(
        [
          'x-tollgate-amount',
          'x-tollgate-chain',
          'x-tollgate-network',
          'x-tollgate-payer',
          'x-tollgate-requirement',
          'x-tollgate-signature',
          'x-tollgate-timestamp',
          'x-tollgate-tx',
        ].sort(),
      );

      // What the origin runs (the docs' snippet): its own secret, the method and req.url.
      const req = { method: seen.method, target: seen.url };
      expect(seen.url).toBe('/base/orders/new?ref=a%20b');
      const verified = verifyPaymentContext(seen.headers, req, UPSTREAM_KEY);
      expect(verified).toMatchObject({
        ok: true,
        context: { payer: wallet.address, chain, tx: receipt.txHashOrDigest, amount: '0.022' },
      });
      const tampered = { ...seen.headers, 'x-tollgate-amount': '22' };
      expect(verifyPaymentContext(tampered, req, UPSTREAM_KEY)).toEqual({
        ok: false,
        reason: 'bad_signature',
      });
      expect(verifyPaymentContext(seen.headers, { ...req, target: '/base/items' }, UPSTREAM_KEY).ok).toBe(
        false,
      );
      expect(verifyPaymentContext(seen.headers, req, 'another-origin-secret').ok).toBe(false);

      // The docs' snippet, as pasted by a provider, agrees.
      const asNode = { headers: seen.headers, method: seen.method, url: seen.url };
      expect(verifyTollgate(asNode, UPSTREAM_KEY)).toMatchObject({ payer: wallet.address, amount: '0.022' });
      expect(verifyTollgate({ ...asNode, headers: tampered }, UPSTREAM_KEY)).toBeNull();
      expect(
        verifyTollgate(
          { ...asNode, headers: { ...seen.headers, 'x-tollgate-payer': 'someone' } },
          UPSTREAM_KEY,
        ),
      ).toBeNull();
      expect(verifyTollgate({ ...asNode, method: 'GET' }, UPSTREAM_KEY)).toBeNull();
      expect(verifyTollgate(asNode, 'another-origin-secret')).toBeNull();
    });
  }

  it('a free request carries no payment context, and a client-sent X-Tollgate-Payer does not reach the origin', async () => {
    const res = await fetch(`${h.baseUrl}/p/${h.project.slug}/free`, {
      headers: { 'x-tollgate-payer': 'forged-payer', 'X-Tollgate-Signature': 'v1=00' },
    });
    expect(res.status).toBe(200);
    const seen = h.upstream.calls('/base/free').at(-1)!;
    expect(tollgateHeaders(seen.headers)).toEqual([]);
  });

  it('an API without an origin secret gets the context unsigned', async () => {
    const published = await publishProject(h.store, {
      slug: `open-${randomBytes(3).toString('hex')}`,
      name: 'No origin auth',
      owner: { chain: 'solana', address: h.recipients.solana.provider },
      api: { name: 'open upstream', baseUrl: `${h.upstream.url}/open` },
      endpoints: [{ method: 'GET', path: 'thing', price: '0.01', timeoutMs: 2000 }],
      rails: [{ chain: 'sui', network: 'localnet', providerRecipient: h.recipients.sui.provider }],
    });
    const wallet = await h.newPayer('sui', '1');
    const res = await payFetch(fetch, { wallets: [wallet] })(
      `${h.baseUrl}/p/${published.project.slug}/thing`,
    );
    expect(res.status).toBe(200);
    const seen = h.upstream.calls('/open/thing').at(-1)!;
    expect(seen.headers['x-tollgate-payer']).toBe(wallet.address);
    expect(seen.headers['x-tollgate-amount']).toBe('0.011');
    expect(seen.headers['x-tollgate-signature']).toBeUndefined();
  });
});
