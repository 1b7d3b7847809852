/**
 * Attacks on the payment proof. Each one must end in a refusal that moves nothing:
 * no upstream call, no redemption burnt, and never a 500.
 */
import {
  computeRequestHash,
  EMPTY_BODY_SHA256,
  encodePaymentProof,
  type PaymentProof,
  type PaymentRequirement,
  parseAmount,
} from '@tollgate/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';

let h: Harness;
let itemsUrl: string;
beforeAll(async () => {
  h = await startHarness();
  itemsUrl = `${h.baseUrl}/p/${h.project.slug}/items`;
});
afterAll(async () => {
  await h?.close();
});

const decode = (header: string) => JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentProof;
const reencode = (proof: PaymentProof) => encodePaymentProof(proof);

async function expectRejected(res: Response, reason: string): Promise<PaymentRequirement> {
  const body = (await res.json()) as PaymentRequirement & { requestId?: string };
  expect({ status: res.status, reason: body.reason }).toEqual({ status: 402, reason });
  expect(body.accepts.length).toBeGreaterThan(0);
  // The refusal's 402 carries the request's id, as every answer does.
  expect(body.requestId).toBe(res.headers.get('x-request-id'));
  return body;
}

describe('proof attacks', () => {
  for (const chain of ['solana', 'sui'] as const) {
    it(`refuses a stolen ${chain} proof re-hashed for another query, and it stays good for its own`, async () => {
      const wallet = await h.newPayer(chain);
      const mine = `${itemsUrl}?city=Oslo`;
      const { requirement } = await challenge(mine);
      const { header } = await payFor(wallet, requirement);
      // The thief knows every input of requestHash from the 402 and the proof: recompute it
      // for their own query and send the stolen payment first.
      const stolen = decode(header);
      const theirs = `/p/${h.project.slug}/items?city=Paris`;
      const forged = computeRequestHash({
        scheme: requirement.scheme,
        method: 'GET',
        path: theirs,
        bodySha256: EMPTY_BODY_SHA256,
        price: parseAmount(requirement.accepts[0]!.splits[0]!.amount, 6),
        fee: parseAmount(requirement.accepts[0]!.splits[1]!.amount, 6),
        accepts: requirement.accepts.map((a) => ({
          chain: a.chain,
          network: a.network,
          asset: a.asset,
          splits: a.splits.map((s) => ({ ...s, amount: parseAmount(s.amount, 6) })),
        })),
        nonce: requirement.nonce,
        expiresAt: requirement.expiresAt,
      });
      const before = h.upstream.calls('/base/items').length;
      const thief = await fetch(
        `${h.baseUrl}${theirs}`,
        withPayment({}, reencode({ ...stolen, requestHash: forged })),
      );
      await expectRejected(thief, 'request_mismatch');
      expect(h.upstream.calls('/base/items').length).toBe(before);
      const owner = await fetch(mine, withPayment({}, header));
      expect(owner.status).toBe(200);
    });
  }

  it('replays the stored response for the same proof, calling the upstream once', async () => {
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(itemsUrl);
    const { header } = await payFor(wallet, requirement);
    const before = h.upstream.calls('/base/items').length;
    const first = await fetch(itemsUrl, withPayment({}, header));
    const second = await fetch(itemsUrl, withPayment({}, header));
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers.get('x-tollgate-replay')).toBe('true');
    expect(await second.text()).toBe(await first.text());
    expect(h.upstream.calls('/base/items').length).toBe(before + 1);
  });

  it('refuses one transaction for a second requirement', async () => {
    const wallet = await h.newPayer('sui');
    const a = await challenge(itemsUrl);
    const { tx } = await payFor(wallet, a.requirement);
    const first = await fetch(
      itemsUrl,
      withPayment({}, await payWith(a.requirement, wallet.address, tx, 'sui')),
    );
    expect(first.status).toBe(200);
    const b = await challenge(itemsUrl);
    const res = await fetch(
      itemsUrl,
      withPayment({}, await payWith(b.requirement, wallet.address, tx, 'sui')),
    );
    // Known from the redemption table: refused without asking the chain again.
    await expectRejected(res, 'transaction_already_used');
  });

  it("refuses someone else's transaction that lacks our nonce in its memo", async () => {
    const victim = await h.newPayer('solana');
    const attacker = await h.newPayer('solana');
    const theirs = await challenge(itemsUrl);
    const { tx } = await payFor(victim, theirs.requirement);
    const ours = await challenge(itemsUrl);
    // Claiming the victim's payment as the victim (payer = signer) still fails: wrong memo.
    const asVictim = await fetch(
      itemsUrl,
      withPayment({}, await payWith(ours.requirement, victim.address, tx, 'solana')),
    );
    await expectRejected(asVictim, 'memo_missing');
    // Claiming it as ourselves fails on the signer too.
    const asAttacker = await fetch(
      itemsUrl,
      withPayment({}, await payWith(ours.requirement, attacker.address, tx, 'solana')),
    );
    expect(((await asAttacker.json()) as { reason: string }).reason).toMatch(/payer_not_signer|memo_missing/);
    // The victim can still redeem their own payment afterwards: nothing was burnt.
    const victimRes = await fetch(
      itemsUrl,
      withPayment({}, await payWith(theirs.requirement, victim.address, tx, 'solana')),
    );
    expect(victimRes.status).toBe(200);
  });

  it('refuses a proof for a different body, path, query or method', async () => {
    const wallet = await h.newPayer('solana');
    const ordersUrl = `${h.baseUrl}/p/${h.project.slug}/orders/new?x=1`;
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' };
    const { requirement } = await challenge(ordersUrl, init);
    const { header } = await payFor(wallet, requirement);
    const before = h.upstream.calls().length;
    await expectRejected(
      await fetch(ordersUrl, withPayment({ ...init, body: '{"a":2}' }, header)),
      'request_mismatch',
    );
    await expectRejected(
      await fetch(ordersUrl, withPayment({ ...init, body: '{"a": 1}' }, header)),
      'request_mismatch',
    );
    await expectRejected(
      await fetch(`${h.baseUrl}/p/${h.project.slug}/orders/new?x=2`, withPayment(init, header)),
      'request_mismatch',
    );
    // Another route: the token was issued for another endpoint.
    await expectRejected(await fetch(itemsUrl, withPayment({}, header)), 'requirement_mismatch');
    expect(h.upstream.calls().length).toBe(before);
    // The right request still works with the same proof.
    expect((await fetch(ordersUrl, withPayment(init, header))).status).toBe(200);
  });

  it('refuses a proof presented long after the requirement expired, and a payment made after expiry', async () => {
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(itemsUrl);
    const { header } = await payFor(wallet, requirement);
    const ttlMs = h.config.requirementTtlSec * 1000;
    h.setClockOffset(ttlMs + 2 * 60 * 60 * 1000);
    try {
      await expectRejected(await fetch(itemsUrl, withPayment({}, header)), 'requirement_expired');
    } finally {
      h.setClockOffset(0);
    }
    // Refusing it burnt nothing: presented in time, the same proof works.
    expect((await fetch(itemsUrl, withPayment({}, header))).status).toBe(200);

    // A requirement issued "long ago" and paid now: the transaction is after expiresAt.
    h.setClockOffset(-(ttlMs + 5 * 60 * 1000));
    let old: PaymentRequirement;
    try {
      old = (await challenge(itemsUrl)).requirement;
    } finally {
      h.setClockOffset(0);
    }
    const late = await payFor(wallet, old);
    await expectRejected(await fetch(itemsUrl, withPayment({}, late.header)), 'transaction_too_late');
  });

  it('refuses a proof whose fields differ from its requirement', async () => {
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(itemsUrl);
    const { header } = await payFor(wallet, requirement);
    const proof = decode(header);
    await expectRejected(
      await fetch(itemsUrl, withPayment({}, reencode({ ...proof, expiresAt: '2020-01-01T00:00:00.000Z' }))),
      'proof_mismatch',
    );
    await expectRejected(
      await fetch(itemsUrl, withPayment({}, reencode({ ...proof, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }))),
      'proof_mismatch',
    );
    await expectRejected(
      await fetch(itemsUrl, withPayment({}, reencode({ ...proof, network: 'mainnet' }))),
      'unsupported_chain',
    );
    expect((await fetch(itemsUrl, withPayment({}, header))).status).toBe(200);
  });

  it('refuses underpaid and misdirected legs', async () => {
    const wallet = await h.newPayer('solana');
    const under = await challenge(itemsUrl);
    const { header: underHeader } = await payFor(wallet, under.requirement, (o) => ({
      ...o,
      splits: o.splits.map((s) => (s.recipientType === 'provider' ? { ...s, amount: '0.009999' } : s)),
    }));
    await expectRejected(await fetch(itemsUrl, withPayment({}, underHeader)), 'amount_mismatch');

    const misdirected = await challenge(itemsUrl);
    const { header: misHeader } = await payFor(wallet, misdirected.requirement, (o) => ({
      ...o,
      splits: o.splits.map((s) => ({ ...s, payTo: o.splits[0]!.payTo })),
    }));
    await expectRejected(await fetch(itemsUrl, withPayment({}, misHeader)), 'amount_mismatch');
  });

  it('refuses a forged or altered requirement token', async () => {
    const wallet = await h.newPayer('solana');
    const { requirement } = await challenge(itemsUrl);
    const { header } = await payFor(wallet, requirement);
    const proof = decode(header);
    // r2.<kid>.<quote>.<issue>.<mac>: a lower price in the quote part, a later expiry in the issue part.
    const [v, kid, quote, issue, mac] = proof.paymentRequirementId.split('.') as [
      string,
      string,
      string,
      string,
      string,
    ];
    const edit = (part: string, change: (w: Record<string, unknown>) => void) => {
      const w = JSON.parse(Buffer.from(part, 'base64url').toString());
      change(w);
      return Buffer.from(JSON.stringify(w)).toString('base64url');
    };
    for (const altered of [
      `${v}.${kid}.${edit(quote, (w) => (w.p = '1'))}.${issue}.${mac}`,
      `${v}.${kid}.${quote}.${edit(issue, (w) => (w.e = (w.e as number) + 3_600_000))}.${mac}`,
    ])
      await expectRejected(
        await fetch(itemsUrl, withPayment({}, reencode({ ...proof, paymentRequirementId: altered }))),
        'requirement_forged',
      );
    await expectRejected(
      await fetch(
        itemsUrl,
        withPayment({}, reencode({ ...proof, paymentRequirementId: 'r1.deadbeef.e30.AAAA' })),
      ),
      'requirement_forged',
    );
    await expectRejected(
      await fetch(
        itemsUrl,
        withPayment({}, reencode({ ...proof, paymentRequirementId: 'r2.deadbeef.e30.e30.AAAA' })),
      ),
      'requirement_forged',
    );
    // Nothing was consumed: the genuine proof still works.
    expect((await fetch(itemsUrl, withPayment({}, header))).status).toBe(200);
  });

  it('answers malformed X-PAYMENT headers with 400 and never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 300 }), fc.base64String({ maxLength: 300 })),
        async (junk) => {
          const value = junk.replace(/[^\x21-\x7e]/g, '') || 'x';
          const res = await fetch(itemsUrl, { headers: { 'x-payment': value } });
          expect([400, 402]).toContain(res.status);
          const body = (await res.json()) as { error: string };
          expect(['invalid_payment_header', 'payment_required']).toContain(body.error);
        },
      ),
      { numRuns: 60 },
    );
  });
});

async function payWith(
  requirement: PaymentRequirement,
  payer: string,
  tx: string,
  chain: 'sui' | 'solana',
): Promise<string> {
  const option = requirement.accepts.find((a) => a.chain === chain)!;
  return encodePaymentProof({
    x402Version: 1,
    scheme: requirement.scheme,
    chain,
    network: option.network,
    asset: 'USDC',
    payer,
    txHashOrDigest: tx,
    paymentRequirementId: requirement.paymentRequirementId,
    nonce: requirement.nonce,
    requestHash: requirement.requestHash,
    expiresAt: requirement.expiresAt,
  });
}
