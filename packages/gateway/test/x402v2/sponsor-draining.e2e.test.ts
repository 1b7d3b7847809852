/**
 * Sponsor draining through the real gateway (DESIGN §4.12): the gateway is the fee payer
 * of every v2 Solana payment, so a payer could hand it a transaction that, once co-signed,
 * spends the sponsor's SOL or USDC. Each such `PAYMENT-SIGNATURE` — built from a fresh
 * 402's `PAYMENT-REQUIRED` Solana entry and echoing that entry verbatim as `accepted` —
 * is refused with a 402 that says why: nothing is sent, no balance moves (the sponsor's
 * SOL and USDC, the payer's, the platform's), nothing is recorded and the upstream is not
 * called. Where it matters, the same transaction is simulated with the sponsor's
 * signature added, to show the attack was real.
 */
import type { Instruction, KeyPairSigner } from '@solana/kit';
import { address, createKeyPairSignerFromBytes, generateKeyPairSigner } from '@solana/kit';
import {
  decodePaymentRequired,
  decodeSettleResponse,
  encodePaymentSignature,
  type V2PaymentPayload,
  type V2Requirements,
} from '@tollgate/protocol';
import { newSolanaKey } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chains, type Harness, startChains, startHarness } from '../support/gateway-harness.ts';
import {
  computeLimit,
  computePrice,
  memoIx,
  noop,
  type SolanaTx,
  solanaTx,
  systemTransfer,
} from './solana-tx.ts';

let h: Harness;
let chains: Chains;
let url: string;
let tx: SolanaTx;
let sponsorKey: string;
let attacker: string;

const SPONSOR_USDC = 50_000_000n;
const ONE_SOL = 1_000_000_000n;

beforeAll(async () => {
  // Devnet's identity, as sandbox mode has (the stock client's network).
  chains = await startChains({ as: 'devnet' });
  h = await startHarness({ chains });
  await h.store.projects.update(h.project.id, { x402Exact: true });
  h.deps.catalog.invalidate();
  url = `${h.baseUrl}/p/${h.project.slug}/items`;
  tx = solanaTx(h.chains.solana.url, h.chains.solana.mint);
  sponsorKey = h.config.solanaSponsorKey!;
  // The sponsor holds USDC too, so a transfer out of its token account would show.
  await h.chains.solana.faucet(h.sponsor.address, SPONSOR_USDC, 0n);
  attacker = newSolanaKey().address;
  await h.chains.solana.faucet(attacker, 0n, 0n);
});
afterAll(async () => {
  await h?.close();
  await chains?.close();
});

const usdc = (owner: string) => h.chains.solana.usdcBalance(owner);

/** A payer with USDC and no SOL, as a stock client's. */
async function newPayer(usdcAtomic = 1_000_000n): Promise<KeyPairSigner> {
  const key = newSolanaKey();
  await h.chains.solana.faucet(key.address, usdcAtomic, 0n);
  return createKeyPairSignerFromBytes(key.secretKey);
}

/** The Solana entry of a fresh 402's PAYMENT-REQUIRED. */
async function offer(): Promise<{ offered: V2Requirements; memo: string; feePayer: string }> {
  const res = await fetch(url);
  expect(res.status).toBe(402);
  const required = decodePaymentRequired(res.headers.get('payment-required'));
  const offered = required.accepts.find((a) => a.network.startsWith('solana:'));
  if (!offered) throw new Error('no Solana entry in PAYMENT-REQUIRED');
  expect(offered.extra.feePayer).toBe(h.sponsor.address);
  return { offered, memo: String(offered.extra.memo), feePayer: String(offered.extra.feePayer) };
}

type Offer = Awaited<ReturnType<typeof offer>>;

/** The instructions of the stock layout: limit, price, the offered TransferChecked, the memo. */
async function honest(payer: KeyPairSigner, o: Offer): Promise<Instruction[]> {
  return [
    computeLimit(20_000),
    computePrice(1n),
    await tx.transfer({ authority: payer, to: o.offered.payTo, amount: BigInt(o.offered.amount) }),
    memoIx(o.memo),
  ];
}

const header = (accepted: V2Requirements, transaction: string) =>
  encodePaymentSignature({ x402Version: 2, accepted, payload: { transaction } } satisfies V2PaymentPayload);

async function balances(payer: string) {
  const { platform, provider } = h.recipients.solana;
  return {
    sponsorSol: await tx.sol(h.sponsor.address),
    sponsorUsdc: await usdc(h.sponsor.address),
    payerSol: await tx.sol(payer),
    payerUsdc: await usdc(payer),
    platform: await usdc(platform),
    provider: await usdc(provider),
    attackerSol: await tx.sol(attacker),
    attackerUsdc: await usdc(attacker),
  };
}

/**
 * Sends `wire` (built for `o`) echoing the offer verbatim; expects a 402 with `reason`, and
 * nothing sent, moved, recorded or forwarded.
 */
async function expectRefused(payer: KeyPairSigner, o: Offer, wire: string, reason: string) {
  const txId = await tx.txIdOf(wire, sponsorKey);
  const before = await balances(payer.address);
  const slot = await tx.slot();
  const calls = h.upstream.calls('/base/items').length;

  const res = await fetch(url, { headers: { 'payment-signature': header(o.offered, wire) } });
  expect(res.status).toBe(402);
  const body = (await res.json()) as { reason?: string; message?: string };
  expect(body.reason).toBe(reason);
  expect(body.message).toBeTruthy();
  // A fresh offer comes with the refusal, as with every 402 on an opted-in project.
  expect(decodePaymentRequired(res.headers.get('payment-required')).accepts.length).toBeGreaterThan(0);
  expect(res.headers.get('payment-response')).toBeNull();

  // Nothing was sent: no new block, the would-be transaction unknown to the chain.
  expect(await tx.slot()).toBe(slot);
  expect(await tx.status(txId)).toBeNull();
  expect(await balances(payer.address)).toEqual(before);
  expect(await h.store.redemptions.byTx('solana', h.config.chainNetwork, txId)).toBeNull();
  expect(h.upstream.calls('/base/items').length).toBe(calls);
}

/** The transaction would run with the sponsor's signature: the attack was real. */
async function expectWouldRunCosigned(wire: string) {
  const sim = await tx.simulateCosigned(wire, sponsorKey);
  expect(sim.err).toBeNull();
}

describe('the harness builds what the gateway accepts', () => {
  it('a hand-built transaction of the stock layout pays: 200, the platform credited', async () => {
    const payer = await newPayer();
    const o = await offer();
    const wire = await tx.handBuilt(o.feePayer, await honest(payer, o));
    const before = await balances(payer.address);
    const res = await fetch(url, { headers: { 'payment-signature': header(o.offered, wire) } });
    expect(res.status).toBe(200);
    const receipt = decodeSettleResponse(res.headers.get('payment-response'));
    expect(receipt).toMatchObject({ success: true, payer: payer.address, amount: o.offered.amount });
    expect(receipt.transaction).toBe(await tx.txIdOf(wire, sponsorKey));
    const after = await balances(payer.address);
    const amount = BigInt(o.offered.amount);
    expect(after.payerUsdc).toBe(before.payerUsdc - amount);
    expect(after.platform).toBe(before.platform + amount);
    expect(after.sponsorUsdc).toBe(before.sponsorUsdc);
    // The sponsor paid the fee and nothing else: two signatures, a tiny priority fee.
    expect(before.sponsorSol - after.sponsorSol).toBeGreaterThanOrEqual(10_000n);
    expect(before.sponsorSol - after.sponsorSol).toBeLessThan(20_000n);
  });
});

describe('sponsor-draining v2 payments are refused, nothing sent', () => {
  const FEE_PAYER_IN_IX = 'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds';

  describe('(a) the sponsor named in an instruction', () => {
    it('as transfer authority and source: its own USDC would pay', async () => {
      const payer = await newPayer();
      const o = await offer();
      const wire = await tx.handBuilt(o.feePayer, [
        computeLimit(20_000),
        computePrice(1n),
        await tx.transfer({
          authority: noop(h.sponsor.address),
          to: o.offered.payTo,
          amount: BigInt(o.offered.amount),
        }),
        memoIx(o.memo, [payer]),
      ]);
      await expectWouldRunCosigned(wire);
      await expectRefused(payer, o, wire, FEE_PAYER_IN_IX);
    });

    it('as the signer of the memo', async () => {
      const payer = await newPayer();
      const o = await offer();
      const [limit, price, transfer] = await honest(payer, o);
      const wire = await tx.handBuilt(o.feePayer, [
        limit!,
        price!,
        transfer!,
        memoIx(o.memo, [noop(h.sponsor.address)]),
      ]);
      await expectRefused(payer, o, wire, FEE_PAYER_IN_IX);
    });

    it('as the recipient of an extra instruction (the payer’s SOL to the sponsor)', async () => {
      // Not a drain, but the sponsor appears in an instruction's accounts: refused all the same.
      const payer = await newPayer();
      const o = await offer();
      const wire = await tx.handBuilt(o.feePayer, [
        computeLimit(20_000),
        computePrice(1n),
        await tx.transfer({ authority: payer, to: o.offered.payTo, amount: BigInt(o.offered.amount) }),
        memoIx(o.memo),
        systemTransfer(payer, address(h.sponsor.address), 1n),
      ]);
      await expectRefused(payer, o, wire, FEE_PAYER_IN_IX);
    });
  });

  describe('(b) an extra instruction', () => {
    it('a SystemProgram transfer of the sponsor’s SOL', async () => {
      const payer = await newPayer();
      const o = await offer();
      const wire = await tx.handBuilt(o.feePayer, [
        ...(await honest(payer, o)),
        systemTransfer(noop(h.sponsor.address), address(attacker), ONE_SOL),
      ]);
      await expectWouldRunCosigned(wire);
      await expectRefused(payer, o, wire, FEE_PAYER_IN_IX);
    });

    it('a SystemProgram transfer of the sponsor’s SOL in place of the compute price', async () => {
      // Still four instructions: the layout check, not the count, refuses it.
      const payer = await newPayer();
      const o = await offer();
      const [limit, , transfer, memo] = await honest(payer, o);
      const wire = await tx.handBuilt(o.feePayer, [
        limit!,
        systemTransfer(noop(h.sponsor.address), address(attacker), ONE_SOL),
        transfer!,
        memo!,
      ]);
      await expectWouldRunCosigned(wire);
      await expectRefused(payer, o, wire, FEE_PAYER_IN_IX);
    });

    it('an unrelated extra instruction: the payer’s own SOL transfer', async () => {
      const payer = await newPayer();
      const o = await offer();
      const wire = await tx.handBuilt(o.feePayer, [
        ...(await honest(payer, o)),
        systemTransfer(payer, address(attacker), 1n),
      ]);
      await expectRefused(payer, o, wire, 'invalid_exact_svm_payload_transaction_instructions_length');
    });

    it('an unrelated extra instruction: a second compute-unit limit', async () => {
      const payer = await newPayer();
      const o = await offer();
      const wire = await tx.handBuilt(o.feePayer, [computeLimit(20_000), ...(await honest(payer, o))]);
      await expectRefused(payer, o, wire, 'invalid_exact_svm_payload_transaction_instructions_length');
    });
  });

  describe('(c) an extra signer', () => {
    it('a third key signing the memo', async () => {
      const payer = await newPayer();
      const extra = await generateKeyPairSigner();
      const o = await offer();
      const [limit, price, transfer] = await honest(payer, o);
      const wire = await tx.handBuilt(o.feePayer, [
        limit!,
        price!,
        transfer!,
        memoIx(o.memo, [payer, extra]),
      ]);
      await expectRefused(payer, o, wire, 'invalid_exact_svm_payload_excessive_signers');
    });
  });

  describe('(d) the compute budget above the caps', () => {
    it('a compute price above the cap (1 lamport per CU): the sponsor would pay the priority fee', async () => {
      const payer = await newPayer();
      const o = await offer();
      const [limit, , transfer, memo] = await honest(payer, o);
      // 20,000 CU at 100,000 lamports per CU: 2 SOL of priority fee, paid by the fee payer.
      const wire = await tx.handBuilt(o.feePayer, [limit!, computePrice(100_000_000_000n), transfer!, memo!]);
      await expectWouldRunCosigned(wire);
      // The priority fee is the fee payer's: at ten times that price (20 SOL) it could not pay.
      const ruinous = await tx.handBuilt(o.feePayer, [
        limit!,
        computePrice(1_000_000_000_000n),
        transfer!,
        memo!,
      ]);
      expect((await tx.simulateCosigned(ruinous, sponsorKey)).err).toBe('InsufficientFundsForFee');
      await expectRefused(
        payer,
        o,
        wire,
        'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
      );
    });

    it('a compute price just above the cap', async () => {
      const payer = await newPayer();
      const o = await offer();
      const [limit, , transfer, memo] = await honest(payer, o);
      const wire = await tx.handBuilt(o.feePayer, [limit!, computePrice(1_000_001n), transfer!, memo!]);
      await expectRefused(
        payer,
        o,
        wire,
        'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
      );
    });

    it('a compute limit above the cap', async () => {
      const payer = await newPayer();
      const o = await offer();
      const [, price, transfer, memo] = await honest(payer, o);
      const wire = await tx.handBuilt(o.feePayer, [computeLimit(1_400_000), price!, transfer!, memo!]);
      await expectRefused(
        payer,
        o,
        wire,
        'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high',
      );
    });
  });

  it('a refused payer can still pay honestly afterwards', async () => {
    const payer = await newPayer();
    const bad = await offer();
    const drained = await tx.handBuilt(bad.feePayer, [
      ...(await honest(payer, bad)),
      systemTransfer(noop(h.sponsor.address), address(attacker), ONE_SOL),
    ]);
    await expectRefused(payer, bad, drained, FEE_PAYER_IN_IX);
    const o = await offer();
    const wire = await tx.handBuilt(o.feePayer, await honest(payer, o));
    const res = await fetch(url, { headers: { 'payment-signature': header(o.offered, wire) } });
    expect(res.status).toBe(200);
    expect(await usdc(payer.address)).toBe(1_000_000n - BigInt(o.offered.amount));
  });
});
