/**
 * x402 v2 `exact` on Sui against the Sui sandbox: Tollgate's own client signs (never
 * executes) a complete transaction, the gateway's scheme checks it (signature, not yet
 * executed, dry run, exact balance changes, memo), then settles it by executing the
 * pre-signed bytes. Every refused payload leaves every balance as it was.
 */

import { bcs } from '@mysten/sui/bcs';
import { SuiGrpcClient } from '@mysten/sui/grpc';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { Transaction, TransactionDataBuilder } from '@mysten/sui/transactions';
import { fromBase64, toBase64 } from '@mysten/sui/utils';
import type { SuiWallet, V2Requirements } from '@tollgate/client';
import {
  decodePaymentSignature,
  memoForNonce,
  suiExactV2PaymentSignature,
  suiWallet,
} from '@tollgate/client';
import { suiCaip2 } from '@tollgate/protocol';
import type { SuiSandbox } from '@tollgate/sandbox';
import { startSuiSandbox } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainUnavailableError } from '../../src/chains/chain.ts';
import type { ExpectedTransfer, PaymentCheck } from '../../src/chains/exact-v2.ts';
import { createSuiExactV2, suiExactV2TxId } from '../../src/chains/sui/exact-v2.ts';

let sui: SuiSandbox;
let client: SuiGrpcClient;
let caip2: string;
beforeAll(async () => {
  sui = await startSuiSandbox();
  client = new SuiGrpcClient({ network: 'localnet', baseUrl: sui.url });
  caip2 = suiCaip2(sui.chainId);
});
afterAll(async () => {
  await sui?.close();
});

const AMOUNT = 12_500n;

function scheme(opts: { confirmTimeoutMs?: number; caip2?: string; maxGasBudget?: bigint } = {}) {
  return createSuiExactV2({
    rpcUrl: sui.url,
    network: 'localnet',
    caip2: opts.caip2 ?? caip2,
    coinType: sui.coinType,
    timeoutMs: 5_000,
    ...(opts.confirmTimeoutMs !== undefined ? { confirmTimeoutMs: opts.confirmTimeoutMs } : {}),
    ...(opts.maxGasBudget !== undefined ? { maxGasBudget: opts.maxGasBudget } : {}),
  });
}

function newPayer(usdc = 1_000_000n): { kp: Ed25519Keypair; wallet: SuiWallet } {
  const kp = Ed25519Keypair.generate();
  sui.faucet(kp.toSuiAddress(), usdc);
  sui.mintOther(kp.toSuiAddress(), usdc);
  const wallet = suiWallet({
    secretKey: kp,
    rpcUrl: sui.url,
    network: 'localnet',
    coinTypes: { [sui.coinType]: 6, [sui.otherCoinType]: 6 },
  });
  return { kp, wallet };
}

const newAddress = () => Ed25519Keypair.generate().toSuiAddress();

/** An accepts entry as the gateway offers it, and what it expects from the payment. */
function offer(over: Partial<V2Requirements> = {}): { accepted: V2Requirements; expected: ExpectedTransfer } {
  const memo = memoForNonce(crypto.randomUUID().replaceAll('-', ''));
  const accepted: V2Requirements = {
    scheme: 'exact',
    network: caip2,
    amount: AMOUNT.toString(),
    asset: sui.coinType,
    payTo: newAddress(),
    maxTimeoutSeconds: 300,
    extra: { memo },
    ...over,
  };
  return {
    accepted,
    expected: { payTo: accepted.payTo, amount: BigInt(accepted.amount), asset: accepted.asset, memo },
  };
}

async function executed(digest: string): Promise<boolean> {
  try {
    await client.core.getTransaction({ digest });
    return true;
  } catch {
    return false;
  }
}

function expectOk(r: PaymentCheck): asserts r is Extract<PaymentCheck, { ok: true }> {
  if (!r.ok) throw new Error(`expected ok, got ${r.reason}: ${r.message}`);
}

/** Builds and signs (never executes) an arbitrary transaction, for payloads our wallet would not make. */
async function craft(
  payer: Ed25519Keypair,
  o: {
    legs: { to: string; amount: bigint; coinType?: string }[];
    memos?: string[];
    suiTo?: { to: string; amount: bigint };
    gasBudget?: bigint;
    sponsor?: Ed25519Keypair;
  },
): Promise<{ transaction: string; signature: string; digest: string }> {
  const sender = payer.toSuiAddress();
  const tx = new Transaction();
  tx.setSender(sender);
  const byType = new Map<string, { to: string; amount: bigint }[]>();
  for (const l of o.legs) {
    const t = l.coinType ?? sui.coinType;
    byType.set(t, [...(byType.get(t) ?? []), l]);
  }
  for (const [coinType, legs] of byType) {
    const [coin, ...rest] = (await client.core.listCoins({ owner: sender, coinType })).objects;
    const primary = tx.objectRef(coin!);
    if (rest.length)
      tx.mergeCoins(
        primary,
        rest.map((c) => tx.objectRef(c)),
      );
    const parts = tx.splitCoins(
      primary,
      legs.map((l) => tx.pure.u64(l.amount)),
    );
    legs.forEach((l, i) => {
      tx.transferObjects([parts[i]!], l.to);
    });
  }
  if (o.suiTo) {
    const [c] = tx.splitCoins(tx.gas, [tx.pure.u64(o.suiTo.amount)]);
    tx.transferObjects([c!], o.suiTo.to);
  }
  for (const m of o.memos ?? []) tx.pure.string(m);
  // The sandbox estimates gas with the whole gas coin as budget, leaving none for the PTB to split.
  const budget = o.gasBudget ?? (o.suiTo ? 10_000_000n : undefined);
  if (budget !== undefined) tx.setGasBudget(budget);
  if (o.sponsor) {
    const owner = o.sponsor.toSuiAddress();
    const [gas] = (await client.core.listCoins({ owner })).objects;
    tx.setGasOwner(owner);
    tx.setGasPayment([gas!]);
  }
  const bytes = await tx.build({ client });
  const { signature } = await payer.signTransaction(bytes);
  return {
    transaction: toBase64(bytes),
    signature,
    digest: TransactionDataBuilder.getDigestFromBytes(bytes),
  };
}

describe('Sui exact v2: a good payment', () => {
  it('checks without executing, settles to exactly amount at payTo, under the digest the client computed', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2(accepted);
    const s = scheme();
    const before = sui.balance(wallet.address);

    const r = await s.check({ transaction: signed.transaction, signature: signed.signature }, expected);
    expectOk(r);
    expect(r.txId).toBe(signed.digest);
    expect(r.payer).toBe(wallet.address);
    expect(suiExactV2TxId({ transaction: signed.transaction, signature: signed.signature })).toBe(
      signed.digest,
    );
    // Checking runs nothing.
    expect(await executed(r.txId)).toBe(false);
    expect(sui.balance(accepted.payTo)).toBe(0n);
    expect(sui.balance(wallet.address)).toBe(before);

    expect(await s.settle(r)).toEqual({ ok: true, txId: signed.digest });
    const landed = await client.core.getTransaction({ digest: r.txId, include: { balanceChanges: true } });
    expect(landed.Transaction?.digest).toBe(signed.digest);
    expect(sui.balance(accepted.payTo)).toBe(AMOUNT);
    expect(sui.balance(wallet.address)).toBe(before - AMOUNT);

    // Settling again confirms the same transaction; nothing moves twice.
    expect(await s.settle(r)).toEqual({ ok: true, txId: signed.digest });
    expect(sui.balance(accepted.payTo)).toBe(AMOUNT);
  });

  it('two concurrent settles of one payment make one transfer', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2(accepted);
    const r = await scheme().check(signed, expected);
    expectOk(r);
    const results = await Promise.all([scheme().settle(r), scheme().settle(r), scheme().settle(r)]);
    expect(results).toEqual(Array(3).fill({ ok: true, txId: signed.digest }));
    expect(sui.balance(accepted.payTo)).toBe(AMOUNT);
  });

  it('the client signs an expiring transaction paying one leg with the memo once', async () => {
    const { wallet } = newPayer();
    const { accepted } = offer();
    const signed = await wallet.signExactV2(accepted);
    const data = bcs.TransactionData.parse(fromBase64(signed.transaction));
    const { systemState } = await client.core.getCurrentSystemState();
    expect(data.V1.expiration).toEqual({ $kind: 'Epoch', Epoch: Number(systemState.epoch) + 1 });
    expect(data.V1.sender).toBe(wallet.address);
    expect(data.V1.gasData.owner).toBe(wallet.address);
  });
});

describe('Sui exact v2: the PAYMENT-SIGNATURE header', () => {
  it('echoes the accepts entry verbatim and carries { signature, transaction }', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const resource = { url: 'https://gw.example/p/shop/items', description: 'items' };
    const { header, digest } = await suiExactV2PaymentSignature(wallet, accepted, { resource });
    const decoded = decodePaymentSignature(header);
    expect(decoded).toEqual({
      x402Version: 2,
      resource,
      accepted,
      payload: { signature: expect.any(String), transaction: expect.any(String) },
    });
    expect(Object.keys(decoded.payload).sort()).toEqual(['signature', 'transaction']);
    const r = await scheme().check(decoded.payload, expected);
    expectOk(r);
    expect(r.txId).toBe(digest);
    expect(await executed(digest)).toBe(false);
  });

  it('refuses requirements on another network, another scheme or the gasless method, signing nothing', async () => {
    const { wallet } = newPayer();
    await expect(wallet.signExactV2(offer({ network: 'sui:mainnet' }).accepted)).rejects.toMatchObject({
      code: 'network_mismatch',
    });
    await expect(wallet.signExactV2(offer({ scheme: 'upto' }).accepted)).rejects.toMatchObject({
      code: 'invalid_requirement',
    });
    await expect(
      wallet.signExactV2(offer({ extra: { memo: 'm', assetTransferMethod: 'gasless' } }).accepted),
    ).rejects.toMatchObject({ code: 'invalid_requirement' });
    await expect(wallet.signExactV2(offer({ amount: '0' }).accepted)).rejects.toMatchObject({
      code: 'invalid_requirement',
    });
  });
});

describe('Sui exact v2: refused payloads execute nothing', () => {
  /** Checks `payload` against `expected`; the refusal reason, after proving nothing moved. */
  async function refusal(payload: Record<string, unknown>, expected: ExpectedTransfer, payer: string) {
    const before = { payer: sui.balance(payer), payTo: sui.balance(expected.payTo) };
    const r = await scheme().check(payload, expected);
    if (r.ok) throw new Error('expected a refusal');
    const digest = suiExactV2TxId(payload);
    if (digest) expect(await executed(digest)).toBe(false);
    expect({ payer: sui.balance(payer), payTo: sui.balance(expected.payTo) }).toEqual(before);
    return r.reason;
  }

  it('another amount than offered', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2({ ...accepted, amount: String(AMOUNT - 1n) });
    expect(await refusal(signed, expected, wallet.address)).toBe('invalid_exact_sui_payload_amount_mismatch');
    const more = await wallet.signExactV2({ ...accepted, amount: String(AMOUNT + 1n) });
    expect(await refusal(more, expected, wallet.address)).toBe('invalid_exact_sui_payload_amount_mismatch');
  });

  it('another payTo than offered', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2({ ...accepted, payTo: newAddress() });
    expect(await refusal(signed, expected, wallet.address)).toBe(
      'invalid_exact_sui_payload_recipient_mismatch',
    );
  });

  it('a look-alike coin type, and an offer in another asset than the scheme’s', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2({ ...accepted, asset: sui.otherCoinType });
    expect(await refusal(signed, expected, wallet.address)).toBe('invalid_exact_sui_payload_asset_mismatch');
    const good = await wallet.signExactV2(accepted);
    expect(await refusal(good, { ...expected, asset: sui.otherCoinType }, wallet.address)).toBe(
      'invalid_exact_sui_payload_asset_mismatch',
    );
  });

  it('a missing, another or a duplicated memo', async () => {
    const { wallet, kp } = newPayer();
    const { accepted, expected } = offer();
    const none = await wallet.signExactV2({ ...accepted, extra: {} });
    expect(await refusal(none, expected, wallet.address)).toBe('invalid_exact_sui_payload_memo_mismatch');
    const other = await wallet.signExactV2({ ...accepted, extra: { memo: memoForNonce('0'.repeat(32)) } });
    expect(await refusal(other, expected, wallet.address)).toBe('invalid_exact_sui_payload_memo_mismatch');
    const twice = await craft(kp, {
      legs: [{ to: expected.payTo, amount: AMOUNT }],
      memos: [expected.memo, expected.memo],
    });
    expect(await refusal(twice, expected, wallet.address)).toBe('invalid_exact_sui_payload_memo_mismatch');
    const once = await craft(kp, { legs: [{ to: expected.payTo, amount: AMOUNT }], memos: [expected.memo] });
    expectOk(await scheme().check(once, expected));
  });

  it('a signature by another key, a corrupted signature, bytes changed after signing', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2(accepted);
    const bytes = fromBase64(signed.transaction);

    const stranger = await Ed25519Keypair.generate().signTransaction(bytes);
    expect(await refusal({ ...signed, signature: stranger.signature }, expected, wallet.address)).toBe(
      'invalid_exact_sui_payload_signature',
    );

    const sig = fromBase64(signed.signature);
    sig[5] = sig[5]! ^ 0xff;
    expect(await refusal({ ...signed, signature: toBase64(sig) }, expected, wallet.address)).toBe(
      'invalid_exact_sui_payload_signature',
    );

    // The same transaction for 10x the amount, under the original signature.
    const tampered = bcs.TransactionData.parse(bytes);
    const inputs = tampered.V1.kind.ProgrammableTransaction!.inputs;
    const amountInput = inputs.findIndex(
      (i) =>
        i.$kind === 'Pure' &&
        toBase64(fromBase64(i.Pure.bytes)) === toBase64(bcs.u64().serialize(AMOUNT).toBytes()),
    );
    expect(amountInput).toBeGreaterThanOrEqual(0);
    inputs[amountInput] = {
      $kind: 'Pure',
      Pure: {
        bytes: toBase64(
          bcs
            .u64()
            .serialize(AMOUNT * 10n)
            .toBytes(),
        ),
      },
    };
    const forged = toBase64(bcs.TransactionData.serialize(tampered).toBytes());
    expect(
      await refusal(
        { ...signed, transaction: forged },
        { ...expected, amount: AMOUNT * 10n },
        wallet.address,
      ),
    ).toBe('invalid_exact_sui_payload_signature');
  });

  it('a transaction that also pays someone else, or also moves SUI', async () => {
    const { kp } = newPayer();
    const { expected } = offer();
    const payer = kp.toSuiAddress();
    const third = newAddress();
    const split = await craft(kp, {
      legs: [
        { to: expected.payTo, amount: AMOUNT },
        { to: third, amount: 1n },
      ],
      memos: [expected.memo],
    });
    expect(await refusal(split, expected, payer)).toBe('invalid_exact_sui_payload_recipient_mismatch');
    expect(sui.balance(third)).toBe(0n);

    const withSui = await craft(kp, {
      legs: [{ to: expected.payTo, amount: AMOUNT }],
      memos: [expected.memo],
      suiTo: { to: third, amount: 1_000n },
    });
    expect(await refusal(withSui, expected, payer)).toBe('invalid_exact_sui_payload_asset_mismatch');

    const tipToPayTo = await craft(kp, {
      legs: [{ to: expected.payTo, amount: AMOUNT }],
      memos: [expected.memo],
      suiTo: { to: expected.payTo, amount: 1_000n },
    });
    expect(await refusal(tipToPayTo, expected, payer)).toBe('invalid_exact_sui_payload_asset_mismatch');

    const twoCoins = await craft(kp, {
      legs: [
        { to: expected.payTo, amount: AMOUNT },
        { to: expected.payTo, amount: 5n, coinType: sui.otherCoinType },
      ],
      memos: [expected.memo],
    });
    expect(await refusal(twoCoins, expected, payer)).toBe('invalid_exact_sui_payload_asset_mismatch');
  });

  it('a gas budget over the limit, and gas sponsored by someone else', async () => {
    const { kp } = newPayer();
    const { expected } = offer();
    const payer = kp.toSuiAddress();
    const big = await craft(kp, {
      legs: [{ to: expected.payTo, amount: AMOUNT }],
      memos: [expected.memo],
      gasBudget: 200_000_000n,
    });
    expect(await refusal(big, expected, payer)).toBe('invalid_exact_sui_payload_gas_budget');
    expectOk(await scheme({ maxGasBudget: 200_000_000n }).check(big, expected));

    const sponsor = Ed25519Keypair.generate();
    sui.faucet(sponsor.toSuiAddress(), 0n);
    const sponsored = await craft(kp, {
      legs: [{ to: expected.payTo, amount: AMOUNT }],
      memos: [expected.memo],
      sponsor,
    });
    expect(await refusal(sponsored, expected, payer)).toBe('invalid_exact_sui_payload_gas');
  });

  it('payloads that are not { signature, transaction } or do not decode', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2(accepted);
    const s = scheme();
    const reason = async (p: Record<string, unknown>) => {
      const r = await s.check(p, expected);
      return r.ok ? 'ok' : r.reason;
    };
    expect(await reason({})).toBe('invalid_payload');
    expect(await reason({ transaction: signed.transaction })).toBe('invalid_payload');
    expect(await reason({ ...signed, transaction: `${signed.transaction}\n` })).toBe('invalid_payload');
    expect(await reason({ ...signed, transaction: 42 })).toBe('invalid_payload');
    expect(await reason({ ...signed, transaction: toBase64(new Uint8Array([1, 2, 3])) })).toBe(
      'invalid_exact_sui_payload_transaction_could_not_be_decoded',
    );
    const trailing = toBase64(Uint8Array.of(...fromBase64(signed.transaction), 0));
    expect(await reason({ ...signed, transaction: trailing })).toBe(
      'invalid_exact_sui_payload_transaction_could_not_be_decoded',
    );
    expect(suiExactV2TxId({})).toBeNull();
  });

  it('payTo equal to the payer', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2({ ...accepted, payTo: wallet.address });
    expect(await refusal(signed, { ...expected, payTo: wallet.address }, wallet.address)).toBe(
      'invalid_exact_sui_payload_recipient_mismatch',
    );
  });
});

describe('Sui exact v2: executed transactions and spent coins', () => {
  it('check refuses a transaction that already ran; settle confirms it by digest, without a second transfer', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2(accepted);
    const s = scheme();
    const r = await s.check(signed, expected);
    expectOk(r);
    // The payer broadcasts it itself after the check.
    await client.core.executeTransaction({
      transaction: fromBase64(signed.transaction),
      signatures: [signed.signature],
    });
    expect(sui.balance(accepted.payTo)).toBe(AMOUNT);
    expect(await s.check(signed, expected)).toMatchObject({
      ok: false,
      reason: 'transaction_already_executed',
    });
    expect(await s.settle(r)).toEqual({ ok: true, txId: signed.digest });
    expect(sui.balance(accepted.payTo)).toBe(AMOUNT);

    // simulate: false gives the txId and a handle for a payload that already ran.
    const again = await s.check(signed, expected, { simulate: false });
    expectOk(again);
    expect(again.txId).toBe(signed.digest);
    expect(await s.settle(again)).toEqual({ ok: true, txId: signed.digest });
    expect(sui.balance(accepted.payTo)).toBe(AMOUNT);
  });

  it('a payer who spends the coins after signing: check says simulation_failed, settle transaction_rejected', async () => {
    const { kp, wallet } = newPayer(100_000n);
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2(accepted);
    const s = scheme();
    const r = await s.check(signed, expected);
    expectOk(r);
    // Spend the same USDC coin elsewhere.
    const elsewhere = newAddress();
    const spend = await craft(kp, { legs: [{ to: elsewhere, amount: 1n }] });
    await client.core.executeTransaction({
      transaction: fromBase64(spend.transaction),
      signatures: [spend.signature],
    });
    expect(await s.check(signed, expected)).toMatchObject({ ok: false, reason: 'simulation_failed' });
    expect(await s.settle(r)).toMatchObject({ ok: false, reason: 'transaction_rejected' });
    expect(await executed(signed.digest)).toBe(false);
    expect(sui.balance(accepted.payTo)).toBe(0n);
  });
});

describe('Sui exact v2: one wallet, two outstanding payments', () => {
  it('both spend the same coin versions: the first settled wins, the second is transaction_rejected', async () => {
    const { wallet } = newPayer();
    const a = offer();
    const b = offer();
    const signedA = await wallet.signExactV2(a.accepted);
    const signedB = await wallet.signExactV2(b.accepted);
    const s = scheme();
    const checkedA = await s.check(signedA, a.expected);
    const checkedB = await s.check(signedB, b.expected);
    expectOk(checkedA);
    expectOk(checkedB);
    expect(await s.settle(checkedB)).toEqual({ ok: true, txId: signedB.digest });
    expect(await s.settle(checkedA)).toMatchObject({ ok: false, reason: 'transaction_rejected' });
    expect(sui.balance(b.accepted.payTo)).toBe(AMOUNT);
    expect(sui.balance(a.accepted.payTo)).toBe(0n);
  });
});

describe('Sui exact v2: the node', () => {
  it('an unreachable node is ChainUnavailableError, never a verdict; the same payment settles later', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2(accepted);
    const s = scheme();
    const checked = await s.check(signed, expected);
    expectOk(checked);
    sui.setFault('rpc_down');
    try {
      await expect(scheme().check(signed, expected)).rejects.toBeInstanceOf(ChainUnavailableError);
      await expect(s.settle(checked)).rejects.toBeInstanceOf(ChainUnavailableError);
      // simulate: false asks no node.
      expectOk(await scheme().check(signed, expected, { simulate: false }));
    } finally {
      sui.setFault('none');
    }
    expect(await s.settle(checked)).toEqual({ ok: true, txId: signed.digest });
    expect(sui.balance(accepted.payTo)).toBe(AMOUNT);
  });

  it('settle waits for a checkpoint; past its deadline it is ChainUnavailableError, and a later settle confirms', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2(accepted);
    const checked = await scheme().check(signed, expected);
    expectOk(checked);
    sui.setFault('hold_finality');
    try {
      await expect(scheme({ confirmTimeoutMs: 300 }).settle(checked)).rejects.toBeInstanceOf(
        ChainUnavailableError,
      );
      expect(sui.balance(accepted.payTo)).toBe(AMOUNT); // executed, not yet checkpointed
      const waiting = scheme({ confirmTimeoutMs: 10_000 }).settle(checked);
      setTimeout(() => sui.finalizeAll(), 300);
      expect(await waiting).toEqual({ ok: true, txId: signed.digest });
    } finally {
      sui.setFault('none');
    }
    expect(sui.balance(accepted.payTo)).toBe(AMOUNT);
  });

  it('a node on another chain than the scheme’s CAIP-2 network is ChainUnavailableError', async () => {
    const { wallet } = newPayer();
    const { accepted, expected } = offer();
    const signed = await wallet.signExactV2(accepted);
    await expect(scheme({ caip2: 'sui:mainnet' }).check(signed, expected)).rejects.toThrow(/not sui:mainnet/);
  });

  it('advertises the memo in extra and names its chain', () => {
    const s = scheme();
    expect(s.extra('m-1')).toEqual({ memo: 'm-1' });
    expect({ chain: s.chain, network: s.network, caip2: s.caip2 }).toEqual({
      chain: 'sui',
      network: 'localnet',
      caip2,
    });
  });
});
