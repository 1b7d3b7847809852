import { describe, expect, it } from 'vitest';
import type {
  Chain,
  ClaimInput,
  EarningsFigures,
  EarningsRow,
  PaymentListQuery,
  PaymentRecord,
  Store,
} from '../../../src/store/store.ts';
import { api, endpoint, project } from './fixtures.ts';
import { claimInput } from './redemptions.ts';

const DAY = 86_400_000;
/** 2027-01-15T00:00:00Z: a UTC midnight, so the day buckets below are known dates. */
const D0 = Date.UTC(2027, 0, 15);
/** Above 2^53: a float anywhere on the way would change these sums. */
const BIG = 2n ** 53n + 7n;
const stored = { status: 200, headers: {}, body: new Uint8Array([1]) };

interface Paid {
  id: string;
  chain: Chain;
  payer: string;
  projectId: string | null;
  endpointId: string | null;
  amount: bigint;
  fee: bigint;
  createdAtMs: number;
  delivered: boolean;
}

/** Claims a payment at `createdAtMs` and, unless told otherwise, delivers it. */
async function pay(
  s: Store,
  o: Partial<ClaimInput> & { nowMs: number; deliver?: boolean; replays?: number },
): Promise<Paid> {
  const input = claimInput(o);
  const r = await s.redemptions.claim(input);
  if (r.kind !== 'claimed') throw new Error(`expected claimed, got ${r.kind}`);
  const deliver = o.deliver ?? true;
  if (deliver) expect(await s.redemptions.complete(r.redemption.id, 1, stored, o.nowMs + 5)).toBe(true);
  else await s.redemptions.release(r.redemption.id, 1, { failed: true });
  for (let i = 0; i < (o.replays ?? 0); i++) await s.redemptions.noteReplay(r.redemption.id);
  return {
    id: r.redemption.id,
    chain: input.chain,
    payer: input.payer,
    projectId: input.projectId,
    endpointId: input.endpointId,
    amount: input.amount,
    fee: input.fee,
    createdAtMs: o.nowMs,
    delivered: deliver,
  };
}

function sums(paid: Paid[]): EarningsFigures[] {
  const out = new Map<Chain, EarningsFigures>();
  for (const p of paid) {
    const t = out.get(p.chain) ?? { chain: p.chain, requests: 0, gross: 0n, fee: 0n };
    t.requests += 1;
    t.gross += p.amount;
    t.fee += p.fee;
    out.set(p.chain, t);
  }
  return [...out.values()].sort((a, b) => a.chain.localeCompare(b.chain));
}

function rowSums(rows: EarningsRow[]): EarningsFigures[] {
  const out = new Map<Chain, EarningsFigures>();
  for (const r of rows) {
    const t = out.get(r.chain) ?? { chain: r.chain, requests: 0, gross: 0n, fee: 0n };
    t.requests += r.requests;
    t.gross += r.gross;
    t.fee += r.fee;
    out.set(r.chain, t);
  }
  return [...out.values()].sort((a, b) => a.chain.localeCompare(b.chain));
}

/** Every page of a listing, following the keyset from the last row of each page. */
async function allPages(s: Store, q: Omit<PaymentListQuery, 'limit' | 'after'>, limit: number) {
  const pages: PaymentRecord[][] = [];
  let after: PaymentListQuery['after'];
  for (;;) {
    const page = await s.paymentReads.list({ ...q, limit, ...(after ? { after } : {}) });
    if (page.length === 0) break;
    pages.push(page);
    const last = page.at(-1)!;
    after = { createdAtMs: last.createdAtMs, id: last.id };
    if (page.length < limit) break;
  }
  return pages;
}

async function twoProjects(s: Store) {
  const a = await project(s, 'earner');
  const apiA = await api(s, a.id);
  const e1 = await endpoint(s, { projectId: a.id, apiId: apiA.id }, { path: 'v1/one' });
  const e2 = await endpoint(s, { projectId: a.id, apiId: apiA.id }, { method: 'POST', path: 'v1/two' });
  const b = await project(s, 'other');
  const apiB = await api(s, b.id);
  const eb = await endpoint(s, { projectId: b.id, apiId: apiB.id });
  return { a, e1, e2, b, eb };
}

export function paymentReadContract(get: () => Store): void {
  describe('payment read models', () => {
    it('earnings: totals per chain equal the legs paid, rows of every grouping sum to them', async () => {
      const s = get();
      const { a, e1, e2, b, eb } = await twoProjects(s);
      const mine = (chain: Chain, ep: string, nowMs: number, amount: bigint, fee: bigint, extra = {}) =>
        pay(s, { chain, projectId: a.id, endpointId: ep, nowMs, amount, fee, ...extra });
      const paid = [
        await mine('solana', e1.id, D0, 10_100n, 100n),
        await mine('solana', e1.id, D0 + DAY - 1, BIG, 1_000n, { replays: 2 }),
        await mine('solana', e2.id, D0 + DAY, 20_200n, 200n),
        await mine('sui', e1.id, D0 + 3_600_000, BIG, BIG - 1n),
        await mine('sui', e2.id, D0 + 2 * DAY + 5, 30_300n, 300n, { payer: 'SomeoneElse' }),
      ];
      // Not earnings: undelivered, another project, outside the range ([from, to)).
      await mine('solana', e1.id, D0 + 10, 99_999n, 9n, { deliver: false });
      await pay(s, { projectId: b.id, endpointId: eb.id, nowMs: D0 + 20, amount: 77_000n, fee: 7n });
      await mine('solana', e1.id, D0 - 1, 55_000n, 5n);
      await mine('sui', e1.id, D0 + 3 * DAY, 66_000n, 6n);
      const range = { projectId: a.id, fromMs: D0, toMs: D0 + 3 * DAY };

      const expected = sums(paid);
      expect(expected.map((t) => t.gross)).toEqual([10_100n + BIG + 20_200n, BIG + 30_300n]);
      for (const groupBy of ['day', 'endpoint', 'chain'] as const) {
        const { totals, rows } = await s.paymentReads.earnings({ ...range, groupBy });
        expect(totals).toEqual(expected);
        expect(rowSums(rows)).toEqual(expected);
      }

      const byDay = await s.paymentReads.earnings({ ...range, groupBy: 'day' });
      expect(byDay.rows.map((r) => [r.key, r.chain, r.requests])).toEqual([
        ['2027-01-15', 'solana', 2],
        ['2027-01-15', 'sui', 1],
        ['2027-01-16', 'solana', 1],
        ['2027-01-17', 'sui', 1],
      ]);
      expect(byDay.rows[0]).toMatchObject({ gross: 10_100n + BIG, fee: 1_100n });

      const byEndpoint = await s.paymentReads.earnings({ ...range, groupBy: 'endpoint' });
      const ids = [e1.id, e2.id].sort();
      expect(byEndpoint.rows.map((r) => [r.key, r.chain])).toEqual([
        [ids[0], 'solana'],
        [ids[0], 'sui'],
        [ids[1], 'solana'],
        [ids[1], 'sui'],
      ]);
      const byChain = await s.paymentReads.earnings({ ...range, groupBy: 'chain' });
      expect(byChain.rows.map((r) => r.key)).toEqual(['solana', 'sui']);

      // Nothing in range: no totals, no rows.
      expect(await s.paymentReads.earnings({ ...range, fromMs: 0, toMs: 1, groupBy: 'day' })).toEqual({
        totals: [],
        rows: [],
      });
    });

    it('lists newest first in keyset pages that never overlap and cover every payment', async () => {
      const s = get();
      const { a, e1, b, eb } = await twoProjects(s);
      const mine: Paid[] = [];
      for (let i = 0; i < 13; i++) {
        // Pairs share a millisecond: the id breaks the tie.
        mine.push(
          await pay(s, {
            chain: i % 2 ? 'sui' : 'solana',
            projectId: a.id,
            endpointId: e1.id,
            nowMs: D0 + Math.floor(i / 2) * 1000,
            deliver: i % 3 !== 0,
          }),
        );
      }
      const theirs = await pay(s, { projectId: b.id, endpointId: eb.id, nowMs: D0 + 500 });
      const q = {
        scope: { projectId: a.id },
        fromMs: D0,
        toMs: D0 + DAY,
        nowMs: D0 + DAY,
        undeliveredAfterMs: 3_600_000,
      };
      for (const limit of [1, 4, 13, 50]) {
        const pages = await allPages(s, q, limit);
        const ids = pages.flat().map((p) => p.id);
        expect(new Set(ids).size).toBe(ids.length);
        const newestFirst = [...mine]
          .sort((x, y) => y.createdAtMs - x.createdAtMs || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0))
          .map((p) => p.id);
        expect(ids).toEqual(newestFirst);
        expect(ids).not.toContain(theirs.id);
      }

      const all = await s.paymentReads.list({ ...q, scope: { all: true }, limit: 100 });
      expect(all.map((p) => p.id).sort()).toEqual([...mine, theirs].map((p) => p.id).sort());
    });

    it('shows what each payment sold, and null for a deleted endpoint', async () => {
      const s = get();
      const { a, e1, e2 } = await twoProjects(s);
      const first = await pay(s, {
        projectId: a.id,
        endpointId: e1.id,
        nowMs: D0,
        amount: BIG,
        fee: 3n,
        replays: 1,
      });
      const second = await pay(s, {
        chain: 'sui',
        projectId: a.id,
        endpointId: e2.id,
        nowMs: D0 + 1,
        meta: { subject: `ep:${e2.id}`, x402Version: 2 },
      });
      await s.endpoints.delete(a.id, e2.id);
      const [two, one] = await s.paymentReads.list({
        scope: { projectId: a.id },
        fromMs: 0,
        toMs: D0 + DAY,
        nowMs: D0 + DAY,
        undeliveredAfterMs: 1000,
        limit: 10,
      });
      expect(one).toMatchObject({
        id: first.id,
        chain: 'solana',
        payer: 'PayerAddr',
        projectId: a.id,
        projectSlug: 'earner',
        endpointId: e1.id,
        endpoint: { id: e1.id, method: 'GET', path: 'v1/one' },
        amount: BIG,
        fee: 3n,
        state: 'delivered',
        replays: 1,
        refundState: null,
        createdAtMs: D0,
        deliveredAtMs: D0 + 5,
        x402Version: 1,
      });
      expect(two).toMatchObject({ id: second.id, endpointId: e2.id, endpoint: null, x402Version: 2 });
      expect(await s.paymentReads.endpointLabels([e1.id, e2.id, e1.id])).toEqual([
        { id: e1.id, method: 'GET', path: 'v1/one' },
      ]);
    });

    it('filters a payer exactly: same address on the other chain and other payers are left out', async () => {
      const s = get();
      const payer = { chain: 'solana' as const, address: 'PayerA' };
      const hers = [
        await pay(s, { payer: 'PayerA', nowMs: D0 }),
        await pay(s, { payer: 'PayerA', nowMs: D0 + 1, projectId: null, endpointId: null }),
      ];
      await pay(s, { payer: 'PayerA', chain: 'sui', nowMs: D0 + 2 });
      await pay(s, { payer: 'PayerB', nowMs: D0 + 3 });
      await pay(s, { payer: 'payera', nowMs: D0 + 4 });
      const got = await s.paymentReads.list({
        scope: { payer },
        fromMs: 0,
        toMs: D0 + DAY,
        nowMs: D0,
        undeliveredAfterMs: 1000,
        limit: 10,
      });
      expect(got.map((p) => p.id)).toEqual(hers.map((p) => p.id).reverse());
    });

    it('filters by status: delivered, replayed, retryable inside the window, undelivered after it', async () => {
      const s = get();
      const base = { projectId: 'prj_s', endpointId: null };
      const delivered = await pay(s, { ...base, nowMs: D0 });
      const replayed = await pay(s, { ...base, nowMs: D0 + 1, replays: 3 });
      const old = await pay(s, { ...base, nowMs: D0 + 2, deliver: false });
      const fresh = await pay(s, { ...base, nowMs: D0 + 5_000, deliver: false });
      const q = {
        scope: { projectId: 'prj_s' },
        fromMs: 0,
        toMs: D0 + DAY,
        // The window is 4 s: `old` (paid at D0+2) is undelivered at D0+4002 exactly, `fresh` is not.
        nowMs: D0 + 4_002,
        undeliveredAfterMs: 4_000,
        limit: 10,
      };
      const ids = async (status: PaymentListQuery['status']) =>
        (await s.paymentReads.list({ ...q, ...(status ? { status } : {}) })).map((p) => p.id);
      expect(await ids('delivered')).toEqual([delivered.id]);
      expect(await ids('replayed')).toEqual([replayed.id]);
      expect(await ids('undelivered')).toEqual([old.id]);
      expect(await ids('retryable')).toEqual([fresh.id]);
      expect(await ids('refunding')).toEqual([]);
      expect(await ids('refunded')).toEqual([]);
      expect(await ids(undefined)).toHaveLength(4);
    });
  });
}
