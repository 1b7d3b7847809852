/**
 * Earnings, payments and payer history against the real gateway (issue 13), shared by the
 * SQLite run (earnings.e2e.test.ts) and the PostgreSQL run (earnings.pg.test.ts). Real
 * payments on both sandbox chains (x402 v1 splits on Solana and Sui, one stock x402 v2
 * exact payment on Solana), one replay and one payment whose upstream failed; then every
 * figure the API shows is checked against the legs the payers actually paid.
 */
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { type MessageSigner, type PaymentWallet, signIn } from '@tollgate/client';
import {
  decodePaymentReceipt,
  decodeSettleResponse,
  formatAmount,
  parseAmount,
  SOLANA_DEVNET_GENESIS_HASH,
  solanaCaip2,
} from '@tollgate/protocol';
import { newSolanaKey } from '@tollgate/sandbox';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { toClientSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken, newAccessToken } from '../../src/auth/tokens.ts';
import type { Owner } from '../../src/store/store.ts';
import { type Chains, type Harness, startChains, startHarness } from '../support/gateway-harness.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';

type Json = Record<string, unknown>;
type Wallet = PaymentWallet & MessageSigner;

interface Leg {
  chain: 'solana' | 'sui';
  tx: string;
  payer: string;
  gross: bigint;
  fee: bigint;
  endpointId: string;
  delivered: boolean;
}

const ADMIN = 'operator-token-0123456789abcdef';
const usdc = (atomic: bigint) => formatAmount(atomic, 6);
const SANDBOX_CAIP2 = solanaCaip2(SOLANA_DEVNET_GENESIS_HASH) as `${string}:${string}`;

export function earningsScenario(
  name: string,
  storeOpts: () => { databaseUrl?: string; storeSchema?: string },
) {
  describe(`earnings, payments and payer history (${name})`, () => {
    let chains: Chains;
    let h: Harness;
    let slug: string;
    let provider: string;
    let stranger: string;
    const legs: Leg[] = [];
    const receipts = new Map<string, Json>();
    let payerA: Wallet;
    let payerB: Wallet;
    let failedTx: string;
    let v2Tx: string;

    const get = (path: string, token?: string, headers: Record<string, string> = {}) =>
      fetch(`${h.baseUrl}${path}`, {
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      });
    const json = async (path: string, token: string, status = 200) => {
      const res = await get(path, token);
      const body = (await res.json()) as Json;
      expect([path, res.status, body]).toEqual([path, status, expect.anything()]);
      return body;
    };
    async function session(owner: Owner): Promise<string> {
      const token = newAccessToken();
      const now = Date.now();
      await h.store.auth.createSession({
        tokenHash: hashToken(token),
        owner,
        createdAtMs: now,
        expiresAtMs: now + 3_600_000,
      });
      return token;
    }

    /** Pays one request with x402 v1 (the split legs) and sends it; records the legs. */
    async function payV1(wallet: Wallet, which: 'items' | 'orders', opts: { expect?: number } = {}) {
      const ep = h.endpoints[which];
      const url = `${h.baseUrl}/p/${slug}/${ep.path}`;
      const init: RequestInit =
        which === 'orders'
          ? { method: 'POST', body: '{"qty":1}', headers: { 'content-type': 'application/json' } }
          : {};
      const { requirement } = await challenge(url, init);
      const { header, tx, option } = await payFor(wallet, requirement);
      const res = await fetch(url, withPayment(init, header));
      await res.arrayBuffer();
      expect(res.status).toBe(opts.expect ?? 200);
      const amounts = option.splits.map((s) => [s.recipientType, parseAmount(s.amount, 6)] as const);
      legs.push({
        chain: wallet.chain,
        tx,
        payer: wallet.address,
        gross: amounts.reduce((sum, [, a]) => sum + a, 0n),
        fee: amounts.filter(([t]) => t === 'platform').reduce((sum, [, a]) => sum + a, 0n),
        endpointId: ep.id,
        delivered: res.status === 200,
      });
      const receipt = res.headers.get('x-payment-response');
      if (receipt) receipts.set(tx, decodePaymentReceipt(receipt) as unknown as Json);
      return { url, init, header, tx };
    }

    /** A stock @x402/fetch client paying with x402 v2 exact on Solana (the platform takes it all). */
    async function payV2(): Promise<void> {
      const key = newSolanaKey();
      await h.chains.solana.faucet(key.address, 1_000_000n, 0n);
      const signer = await createKeyPairSignerFromBytes(key.secretKey);
      const client = new x402Client()
        .register(
          'solana:*',
          new ExactSvmScheme(toClientSvmSigner(signer as never), { rpcUrl: h.chains.solana.url }),
        )
        .setSpendControls({
          allowedAssets: [
            { network: SANDBOX_CAIP2, asset: h.chains.solana.mint, maxAmountPerPayment: '100000' },
          ],
        });
      const res = await wrapFetchWithPayment(fetch, client)(`${h.baseUrl}/p/${slug}/items`);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      const settled = decodeSettleResponse(res.headers.get('payment-response'));
      const price = h.endpoints.items.price;
      legs.push({
        chain: 'solana',
        tx: settled.transaction,
        payer: key.address,
        gross: BigInt(settled.amount!),
        fee: BigInt(settled.amount!) - price,
        endpointId: h.endpoints.items.id,
        delivered: true,
      });
      receipts.set(settled.transaction, settled as unknown as Json);
      v2Tx = settled.transaction;
    }

    beforeAll(async () => {
      // Devnet's identity, as sandbox mode has: the stock v2 client pays only networks it knows.
      chains = await startChains({ as: 'devnet' });
      h = await startHarness({ chains, ...storeOpts(), env: { TOLLGATE_UNDELIVERED_AFTER_SEC: '60' } });
      slug = h.project.slug;
      await h.store.projects.update(h.project.id, { x402Exact: true });
      h.deps.catalog.invalidate();
      provider = await session(h.project.owner);
      const other = { chain: 'solana' as const, address: newSolanaKey().address };
      stranger = await session(other);
      await h.store.projects.create({
        slug: `${slug}-x`,
        name: 'x',
        description: '',
        category: 'x',
        owner: other,
      });

      payerA = (await h.newPayer('solana')) as Wallet;
      payerB = (await h.newPayer('sui')) as Wallet;
      await payV1(payerA, 'items');
      await payV1(payerA, 'orders');
      const replayed = await payV1(payerA, 'items');
      const again = await fetch(replayed.url, withPayment(replayed.init, replayed.header));
      expect([again.status, again.headers.get('x-tollgate-replay')]).toEqual([200, expect.any(String)]);
      await payV1(payerB, 'items');
      await payV1(payerB, 'orders');
      await payV2();
      // The upstream fails: paid, not delivered (retryable, then undelivered 60 s on).
      h.upstream.mode = 'fail500';
      failedTx = (await payV1(payerA, 'items', { expect: 502 })).tx;
      h.upstream.mode = 'ok';
    }, 120_000);
    afterAll(async () => {
      await h?.close();
      await chains?.close();
    });

    const delivered = () => legs.filter((l) => l.delivered);
    function totalsOf(ls: Leg[]) {
      return (['solana', 'sui'] as const)
        .map((chain) => {
          const mine = ls.filter((l) => l.chain === chain);
          const gross = mine.reduce((s, l) => s + l.gross, 0n);
          const fee = mine.reduce((s, l) => s + l.fee, 0n);
          return { chain, requests: mine.length, gross: usdc(gross), fee: usdc(fee), net: usdc(gross - fee) };
        })
        .filter((t) => t.requests > 0);
    }
    function sumRows(rows: Json[]) {
      const by = new Map<string, { requests: number; gross: bigint; fee: bigint; net: bigint }>();
      for (const r of rows) {
        const t = by.get(r.chain as string) ?? { requests: 0, gross: 0n, fee: 0n, net: 0n };
        t.requests += r.requests as number;
        t.gross += parseAmount(r.gross as string, 6);
        t.fee += parseAmount(r.fee as string, 6);
        t.net += parseAmount(r.net as string, 6);
        by.set(r.chain as string, t);
      }
      return [...by.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([chain, t]) => ({
          chain,
          requests: t.requests,
          gross: usdc(t.gross),
          fee: usdc(t.fee),
          net: usdc(t.net),
        }));
    }

    it('earnings equal the sums of the delivered legs per chain, and rows of every grouping sum to them', async () => {
      expect(delivered()).toHaveLength(6);
      for (const groupBy of ['day', 'endpoint', 'chain']) {
        const body = await json(`/v1/projects/${slug}/earnings?groupBy=${groupBy}`, provider);
        expect(body).toMatchObject({ project: slug, unit: 'USDC', groupBy, totals: totalsOf(delivered()) });
        expect(sumRows(body.rows as Json[])).toEqual(totalsOf(delivered()));
      }
      const byEndpoint = await json(`/v1/projects/${slug}/earnings?groupBy=endpoint`, provider);
      const { items, orders } = h.endpoints;
      for (const row of byEndpoint.rows as Json[]) {
        const ep = row.key === items.id ? items : orders;
        expect(row.endpoint).toEqual({ id: ep.id, method: ep.method, path: ep.path });
      }
      const byDay = await json(`/v1/projects/${slug}/earnings`, provider);
      expect(byDay.groupBy).toBe('day');
      for (const row of byDay.rows as Json[]) expect(row.key).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      // A range without payments: nothing, and the operator sees the same as the owner.
      const empty = await json(`/v1/projects/${slug}/earnings?from=2020-01-01&to=2020-01-02`, provider);
      expect(empty).toMatchObject({ from: '2020-01-01T00:00:00.000Z', totals: [], rows: [] });
      const operator = await json(`/v1/projects/${slug}/earnings?groupBy=chain`, ADMIN);
      expect(operator.totals).toEqual(totalsOf(delivered()));
    });

    it('lists every payment once, newest first, in cursor pages that never overlap', async () => {
      const seen: Json[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Json = await json(
          `/v1/projects/${slug}/payments?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          provider,
        );
        seen.push(...(page.payments as Json[]));
        cursor = page.nextCursor as string | null;
        pages++;
      } while (cursor);
      expect(pages).toBe(Math.ceil(legs.length / 2));
      expect(new Set(seen.map((p) => p.id)).size).toBe(legs.length);
      expect(seen.map((p) => p.txId).sort()).toEqual(legs.map((l) => l.tx).sort());
      const times = seen.map((p) => Date.parse(p.createdAt as string));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      for (const leg of legs) {
        const p = seen.find((x) => x.txId === leg.tx)!;
        const ep = leg.endpointId === h.endpoints.items.id ? h.endpoints.items : h.endpoints.orders;
        expect(p).toMatchObject({
          chain: leg.chain,
          network: h.config.chainNetwork,
          payer: leg.payer,
          gross: usdc(leg.gross),
          fee: usdc(leg.fee),
          net: usdc(leg.gross - leg.fee),
          unit: 'USDC',
          endpoint: { id: ep.id, method: ep.method, path: ep.path },
        });
        expect(p.status).toEqual(
          leg.tx === failedTx ? 'retryable' : expect.stringMatching(/^(delivered|replayed)$/),
        );
      }
      expect(seen.filter((p) => p.status === 'replayed')).toHaveLength(1);
      // The same money on chain: the Solana provider got exactly the net of its v1 legs.
      const v1Solana = legs.filter((l) => l.chain === 'solana' && l.tx !== v2Tx);
      const providerNet = v1Solana.reduce((sum, l) => sum + l.gross - l.fee, 0n);
      expect(await h.chains.solana.usdcBalance(h.recipients.solana.provider)).toBe(providerNet);
    });

    it('refuses bad queries and cursors from elsewhere with clean 400s', async () => {
      const first = await json(`/v1/projects/${slug}/payments?limit=1`, provider);
      const cursor = first.nextCursor as string;
      const bad = async (path: string, reason?: string) => {
        const body = await json(path, provider, 400);
        expect(body.error).toBe('invalid_request');
        if (reason) expect([path, body.reason]).toEqual([path, reason]);
      };
      await bad(
        `/v1/projects/${slug}/payments?cursor=${encodeURIComponent(cursor)}&status=delivered`,
        'invalid_cursor',
      );
      // Its signature altered for sure: the second-to-last character is six bits of it (the
      // last one is partly padding), and it is replaced by another (an "AA" put over an "AA"
      // was no change at all, about one run in 4096).
      const tampered = `${cursor.slice(0, -2)}${cursor.at(-2) === 'A' ? 'B' : 'A'}${cursor.at(-1)}`;
      expect(tampered).not.toBe(cursor);
      await bad(`/v1/projects/${slug}/payments?cursor=${encodeURIComponent(tampered)}`, 'invalid_cursor');
      await bad(`/v1/projects/${slug}/payments?cursor=garbage`, 'invalid_cursor');
      await bad(`/v1/projects/${slug}/payments?from=yesterday`, 'invalid_time');
      await bad(`/v1/projects/${slug}/earnings?from=2026-02-01&to=2026-01-01`, 'invalid_range');
      await bad(`/v1/projects/${slug}/earnings?groupBy=week`);
      await bad(`/v1/projects/${slug}/payments?limit=0`);
      await bad(`/v1/projects/${slug}/payments?limit=201`);
      await bad(`/v1/projects/${slug}/payments?status=lost`);
      await bad(`/v1/projects/${slug}/payments?colour=red`);
      // The operator's cursor is not the provider's.
      const op = await json('/v1/payments?limit=1', ADMIN);
      await bad(
        `/v1/projects/${slug}/payments?cursor=${encodeURIComponent(op.nextCursor as string)}`,
        'invalid_cursor',
      );
    });

    it('exports the same rows as CSV', async () => {
      const all = await json(`/v1/projects/${slug}/payments?limit=200`, provider);
      for (const ask of ['?format=csv', '']) {
        const res = await get(
          `/v1/projects/${slug}/payments${ask}`,
          provider,
          ask ? {} : { accept: 'text/csv' },
        );
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
        expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${slug}-payments.csv"`);
        const [header, ...lines] = (await res.text()).trimEnd().split('\r\n');
        const cols = header!.split(',');
        expect(cols).toEqual(
          expect.arrayContaining(['id', 'createdAt', 'txId', 'gross', 'fee', 'net', 'status']),
        );
        const rows = lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
        expect(rows.map((r) => [r.id, r.txId, r.gross, r.fee, r.net, r.status, r.path])).toEqual(
          (all.payments as Json[]).map((p) => [
            p.id,
            p.txId,
            p.gross,
            p.fee,
            p.net,
            p.status,
            (p.endpoint as Json).path,
          ]),
        );
      }
    });

    it("keeps a project's figures from other providers and anonymous callers", async () => {
      for (const path of [
        `/v1/projects/${slug}/earnings`,
        `/v1/projects/${slug}/payments`,
        `/v1/projects/${slug}/payments?format=csv`,
      ]) {
        const res = await get(path, stranger);
        expect([path, res.status, ((await res.json()) as Json).reason]).toEqual([
          path,
          404,
          'project_not_found',
        ]);
        expect([path, (await get(path)).status]).toEqual([path, 401]);
      }
      // The stranger's own project has earned nothing.
      expect((await json(`/v1/projects/${slug}-x/earnings`, stranger)).totals).toEqual([]);
      expect((await json(`/v1/projects/${slug}-x/payments`, stranger)).payments).toEqual([]);
    });

    it("shows a signed-in payer only its own payments, each with its answer's receipt", async () => {
      for (const wallet of [payerA, payerB]) {
        const { accessToken } = await signIn(h.baseUrl, wallet);
        const body = await json('/v1/me/payments?limit=200', accessToken);
        const mine = legs.filter((l) => l.payer === wallet.address);
        const got = body.payments as Json[];
        expect(got.map((p) => p.txId).sort()).toEqual(mine.map((l) => l.tx).sort());
        for (const p of got) {
          const leg = mine.find((l) => l.tx === p.txId)!;
          expect(p).toMatchObject({
            project: slug,
            chain: wallet.chain,
            gross: usdc(leg.gross),
            route: null,
          });
          // The receipt is the X-PAYMENT-RESPONSE the delivered answer carried.
          if (leg.delivered) expect(p.receipt).toEqual(receipts.get(leg.tx));
          else
            expect(p.receipt).toMatchObject({
              success: false,
              txHashOrDigest: leg.tx,
              payer: wallet.address,
            });
        }
      }
      const res = await get('/v1/me/payments');
      expect([res.status, ((await res.json()) as Json).error]).toEqual([401, 'unauthorized']);
      expect((await get('/v1/me/payments', ADMIN)).status).toBe(403);
      // Someone who never paid sees nothing.
      expect((await json('/v1/me/payments', stranger)).payments).toEqual([]);
    });

    it('lists a payment still undelivered after the window for the provider and the operator', async () => {
      const undelivered = async (path: string, token: string) =>
        ((await json(path, token)).payments as Json[]).map((p) => [p.txId, p.status, p.project]);
      // The gateway's clock moves past the window (the chains' does not matter here).
      h.setClockOffset(61_000);
      try {
        expect(await undelivered(`/v1/projects/${slug}/payments?status=undelivered`, provider)).toEqual([
          [failedTx, 'undelivered', undefined],
        ]);
        expect(await undelivered('/v1/payments?status=undelivered', ADMIN)).toEqual([
          [failedTx, 'undelivered', slug],
        ]);
        expect(await undelivered(`/v1/projects/${slug}/payments?status=retryable`, provider)).toEqual([]);
        const all = await json('/v1/payments?limit=200', ADMIN);
        expect((all.payments as Json[]).length).toBe(legs.length);
        // The operator's list is the operator's.
        const res = await get('/v1/payments', provider);
        expect([res.status, ((await res.json()) as Json).reason]).toEqual([403, 'operator_only']);
      } finally {
        h.setClockOffset(0);
      }
    });
  });
}
