/**
 * The Solana sponsor (x402 v2 `exact` fee payer) against the sandbox chain, paid by the
 * stock x402 SVM client: what it builds is checked, simulated, co-signed, sent and
 * confirmed; everything that could make the sponsor pay for more than one honest
 * transfer's fee is refused before a signature is made, and the sponsor's SOL and USDC
 * stay where they were.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Address, Instruction, KeyPairSigner, TransactionSigner } from '@solana/kit';
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createKeyPairSignerFromBytes,
  createNoopSigner,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signBytes,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { SOLANA_MAINNET_CAIP2, SOLANA_MAINNET_GENESIS_HASH, SPL_MEMO_PROGRAM } from '@tollgate/protocol';
import type { SolanaSandbox } from '@tollgate/sandbox';
import { newSolanaKey, startSolanaSandbox } from '@tollgate/sandbox';
import { toClientSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainUnavailableError } from '../../src/chains/chain.ts';
import type { CheckedPayment, ExpectedTransfer } from '../../src/chains/exact-v2.ts';
import type { SolanaSponsor, SolanaSponsorOptions } from '../../src/chains/solana/sponsor.ts';
import { COMPUTE_BUDGET_PROGRAM, createSolanaSponsor } from '../../src/chains/solana/sponsor.ts';

let sb: SolanaSandbox;
let rpc: ReturnType<typeof createSolanaRpc>;
let sponsorKey: { secretKey: Uint8Array; address: string };
let sponsorSigner: KeyPairSigner;
let sponsor: SolanaSponsor;
let payTo: Address;
let attacker: Address;

const AMOUNT = 1_000n;
let memoSeq = 0;
const nextMemo = () => `tg1:test:${++memoSeq}:${Math.random().toString(36).slice(2)}`;

const ata = async (owner: string, mint: string = sb.mint) =>
  (
    await findAssociatedTokenPda({
      owner: address(owner),
      mint: address(mint),
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    })
  )[0];

const usdc = async (owner: string, mint: string = sb.mint): Promise<bigint> => {
  const acc = await rpc.getAccountInfo(await ata(owner, mint), { encoding: 'jsonParsed' }).send();
  if (!acc.value) return 0n;
  return BigInt(
    (acc.value.data as { parsed: { info: { tokenAmount: { amount: string } } } }).parsed.info.tokenAmount
      .amount,
  );
};
const sol = async (owner: string) => (await rpc.getBalance(address(owner)).send()).value;

const fast: Partial<SolanaSponsorOptions> = {
  network: 'localnet',
  timeoutMs: 3_000,
  pollIntervalMs: 20,
  resendIntervalMs: 100,
  confirmTimeoutMs: 5_000,
};
const makeSponsor = (extra: Partial<SolanaSponsorOptions> = {}) =>
  createSolanaSponsor({
    rpcUrl: sb.url,
    secretKey: sponsorKey.secretKey,
    network: 'localnet',
    ...fast,
    ...extra,
  });

async function newPayer(usdcAtomic = 10_000_000n): Promise<KeyPairSigner> {
  const payer = await generateKeyPairSigner();
  if (usdcAtomic > 0n) await sb.faucet(payer.address, usdcAtomic);
  else await sb.faucet(payer.address, 0n); // an empty USDC account and 1 SOL
  return payer;
}

/** The stock x402 client's payload for an offer. */
async function stockPayload(
  payer: KeyPairSigner,
  offer: { amount?: bigint; payTo?: string; asset?: string; memo?: string; feePayer?: string } = {},
) {
  const memo = offer.memo ?? nextMemo();
  const client = new ExactSvmScheme(toClientSvmSigner(payer as never), { rpcUrl: sb.url });
  const requirements = {
    scheme: 'exact',
    network: SOLANA_MAINNET_CAIP2,
    amount: String(offer.amount ?? AMOUNT),
    asset: offer.asset ?? sb.mint,
    payTo: offer.payTo ?? payTo,
    maxTimeoutSeconds: 60,
    extra: { ...sponsor.extra(memo), ...(offer.feePayer ? { feePayer: offer.feePayer } : {}) },
  };
  const { payload } = await client.createPaymentPayload(2, requirements as never);
  return { payload: payload as { transaction: string }, memo };
}

const expected = (memo: string, over: Partial<ExpectedTransfer> = {}): ExpectedTransfer => ({
  payTo,
  amount: AMOUNT,
  asset: sb.mint,
  memo,
  ...over,
});

// --- Hand-built transactions (kit 8), for what the stock client never builds -----------------

const computeLimit = (units: number): Instruction => {
  const data = new Uint8Array(5);
  data[0] = 2;
  new DataView(data.buffer).setUint32(1, units, true);
  return { programAddress: address(COMPUTE_BUDGET_PROGRAM), accounts: [], data };
};
const computePrice = (microLamports: bigint): Instruction => {
  const data = new Uint8Array(9);
  data[0] = 3;
  new DataView(data.buffer).setBigUint64(1, microLamports, true);
  return { programAddress: address(COMPUTE_BUDGET_PROGRAM), accounts: [], data };
};
const memoIx = (memo: string, signers: TransactionSigner[] = []): Instruction => ({
  programAddress: address(SPL_MEMO_PROGRAM),
  accounts: signers.map(
    (s) => ({ address: s.address, role: AccountRole.READONLY_SIGNER, signer: s }) as never,
  ),
  data: new TextEncoder().encode(memo),
});
const systemTransfer = (from: TransactionSigner, to: Address, lamports: bigint): Instruction => {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, lamports, true);
  return {
    programAddress: address('11111111111111111111111111111111'),
    accounts: [
      { address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from } as never,
      { address: to, role: AccountRole.WRITABLE },
    ],
    data,
  };
};
async function transfer(o: {
  source?: Address;
  authority: TransactionSigner;
  to?: string;
  amount?: bigint;
  decimals?: number;
  mint?: string;
}): Promise<Instruction> {
  const mint = address(o.mint ?? sb.mint);
  return getTransferCheckedInstruction({
    source: o.source ?? (await ata(o.authority.address, mint)),
    mint,
    destination: await ata(o.to ?? payTo, mint),
    authority: o.authority,
    amount: o.amount ?? AMOUNT,
    decimals: o.decimals ?? 6,
  });
}

/** The stock layout by default; `instructions` replaces it. Fee payer: the sponsor, unsigned. */
async function handBuilt(
  payer: KeyPairSigner,
  o: {
    memo?: string;
    instructions?: (memo: string) => Promise<Instruction[]> | Instruction[];
    version?: 0 | 'legacy';
    lookupTables?: Record<string, Address[]>;
  } = {},
) {
  const memo = o.memo ?? nextMemo();
  const instructions = o.instructions
    ? await o.instructions(memo)
    : [computeLimit(20_000), computePrice(1n), await transfer({ authority: payer }), memoIx(memo)];
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  let message = pipe(
    createTransactionMessage({ version: o.version ?? 0 }),
    (m) => setTransactionMessageFeePayer(address(sponsor.address), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  if (o.lookupTables) {
    message = compressTransactionMessageUsingAddressLookupTables(
      message as never,
      o.lookupTables as never,
    ) as never;
  }
  const tx = await partiallySignTransactionMessageWithSigners(message);
  return { payload: { transaction: getBase64EncodedWireTransaction(tx) }, memo };
}

/** What the transaction would do with the sponsor's signature added: proves a refused payload was a real attack. */
async function simulateCosigned(wire: string) {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  const sig = await signBytes(sponsorSigner.keyPair.privateKey, tx.messageBytes);
  const signed = { ...tx, signatures: { ...tx.signatures, [sponsorSigner.address]: sig } };
  const full = getBase64EncodedWireTransaction(signed as never);
  return (
    await rpc
      .simulateTransaction(full, {
        encoding: 'base64',
        sigVerify: true,
        replaceRecentBlockhash: false,
      } as never)
      .send()
  ).value;
}

async function sponsorState() {
  return { lamports: await sol(sponsor.address), usdc: await usdc(sponsor.address) };
}

async function expectRefused(
  payload: Record<string, unknown>,
  exp: ExpectedTransfer,
  reason: string,
  s: SolanaSponsor = sponsor,
) {
  const before = await sponsorState();
  const slot = await rpc.getSlot().send();
  const result = await s.check(payload, exp);
  expect(result.ok ? 'accepted' : result.reason).toBe(reason);
  // Nothing was sent: no new block, the sponsor's SOL and USDC untouched.
  expect(await rpc.getSlot().send()).toBe(slot);
  expect(await sponsorState()).toEqual(before);
  return result;
}

async function checked(payload: Record<string, unknown>, exp: ExpectedTransfer, s = sponsor) {
  const result = await s.check(payload, exp);
  if (!result.ok) throw new Error(`check refused: ${result.reason}: ${result.message}`);
  return result as CheckedPayment & { ok: true };
}

beforeAll(async () => {
  sb = await startSolanaSandbox({ genesisHash: SOLANA_MAINNET_GENESIS_HASH });
  rpc = createSolanaRpc(sb.url);
  sponsorKey = newSolanaKey();
  sponsorSigner = await createKeyPairSignerFromBytes(sponsorKey.secretKey);
  // The sponsor holds USDC too, so a transfer out of its account would show.
  await sb.faucet(sponsorKey.address, 50_000_000n);
  sponsor = await makeSponsor();
  payTo = (await generateKeyPairSigner()).address;
  await sb.faucet(payTo, 0n, 0n); // its USDC account exists, as the platform's does
  attacker = (await generateKeyPairSigner()).address;
});
afterAll(() => sb?.close());

describe('Solana sponsor', () => {
  it('is the fee payer in extra and derives its CAIP-2 id from the node', async () => {
    expect(sponsor.address).toBe(sponsorKey.address);
    expect(sponsor.chain).toBe('solana');
    expect(sponsor.network).toBe('localnet');
    expect(sponsor.caip2).toBe(SOLANA_MAINNET_CAIP2);
    expect(sponsor.extra('m-1')).toEqual({ feePayer: sponsorKey.address, memo: 'm-1' });
    expect(await sponsor.balanceLamports()).toBe(await sol(sponsor.address));
    // The 32-byte seed is the same key.
    const fromSeed = await makeSponsor({
      secretKey: sponsorKey.secretKey.slice(0, 32),
      caip2: SOLANA_MAINNET_CAIP2,
    });
    expect(fromSeed.address).toBe(sponsorKey.address);
  });

  it('checks, co-signs, sends and confirms a stock client payment: the payer pays USDC, the sponsor the fee', async () => {
    const payer = await newPayer();
    const { payload, memo } = await stockPayload(payer);
    const before = {
      payerUsdc: await usdc(payer.address),
      payerSol: await sol(payer.address),
      payToUsdc: await usdc(payTo),
      sponsor: await sponsorState(),
    };
    const payment = await checked(payload, expected(memo));
    expect(payment.payer).toBe(payer.address);
    // Checking sent nothing.
    expect(await usdc(payer.address)).toBe(before.payerUsdc);
    expect((await rpc.getSignatureStatuses([payment.txId as never]).send()).value[0]).toBeNull();

    const settled = await sponsor.settle(payment);
    expect(settled).toEqual({ ok: true, txId: payment.txId });
    // The id known at check time is the transaction's first signature.
    const tx = await rpc
      .getTransaction(payment.txId as never, {
        encoding: 'json',
        maxSupportedTransactionVersion: 0,
        commitment: 'confirmed',
      })
      .send();
    expect(tx?.transaction.signatures[0]).toBe(payment.txId);
    expect(tx?.transaction.message.accountKeys[0]).toBe(sponsor.address);
    expect(tx?.meta?.err).toBeNull();

    expect(await usdc(payer.address)).toBe(before.payerUsdc - AMOUNT);
    expect(await usdc(payTo)).toBe(before.payToUsdc + AMOUNT);
    expect(await sol(payer.address)).toBe(before.payerSol);
    const after = await sponsorState();
    expect(after.usdc).toBe(before.sponsor.usdc);
    const fee = before.sponsor.lamports - after.lamports;
    expect(fee).toBeGreaterThanOrEqual(10_000n); // two signatures
    expect(fee).toBeLessThan(20_000n);
  });

  it('settles idempotently: twice, concurrently, and after a restart — one transfer', async () => {
    const payer = await newPayer();
    const { payload, memo } = await stockPayload(payer);
    const before = await usdc(payer.address);
    const payment = await checked(payload, expected(memo));
    const [a, b] = await Promise.all([sponsor.settle(payment), sponsor.settle(payment)]);
    expect(a).toEqual({ ok: true, txId: payment.txId });
    expect(b).toEqual(a);
    // Again: the node says "already processed"; that counts as landed.
    expect(await sponsor.settle(payment)).toEqual(a);

    // A new process with the same key: the same payload checks (already processed) and settles.
    const restarted = await makeSponsor({ caip2: SOLANA_MAINNET_CAIP2 });
    const again = await checked(payload, expected(memo), restarted);
    expect(again.txId).toBe(payment.txId);
    expect(await restarted.settle(again)).toEqual(a);

    // Long after, when the blockhash is gone: found by signature, still landed.
    sb.advanceBlocks(151);
    const later = await checked(payload, expected(memo), restarted);
    expect(await restarted.settle(later)).toEqual(a);

    expect(await usdc(payer.address)).toBe(before - AMOUNT);
  });

  it('reports a blockhash that expired before sending as transaction_expired, having paid nothing', async () => {
    const payer = await newPayer();
    const { payload, memo } = await stockPayload(payer);
    const payment = await checked(payload, expected(memo));
    sb.advanceBlocks(151);
    const before = await sponsorState();
    const result = await sponsor.settle(payment);
    expect(result).toMatchObject({ ok: false, reason: 'transaction_expired' });
    expect(await sponsorState()).toEqual(before);
    expect(await usdc(payer.address)).toBe(10_000_000n);
    // The same payload, checked now, is refused.
    await expectRefused(payload, expected(memo), 'invalid_exact_svm_payload_blockhash_expired');
  });

  it('refuses at settle, free of charge, a payment whose payer spent the money after the check', async () => {
    const payer = await newPayer(AMOUNT);
    const { payload, memo } = await stockPayload(payer);
    const payment = await checked(payload, expected(memo));
    await spendAll(payer);
    const before = await sponsorState();
    expect(await sponsor.settle(payment)).toMatchObject({ ok: false, reason: 'insufficient_funds' });
    expect(await sponsorState()).toEqual(before);
    expect((await rpc.getSignatureStatuses([payment.txId as never]).send()).value[0]).toBeNull();
  });

  it('reports a transaction that landed and failed as transaction_failed', async () => {
    const payer = await newPayer(AMOUNT);
    const { payload, memo } = await stockPayload(payer);
    const payment = await checked(payload, expected(memo));
    await spendAll(payer);
    // As if an earlier settle (another process) had sent it without preflight: it lands and fails.
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(payload.transaction));
    const sig = await signBytes(sponsorSigner.keyPair.privateKey, tx.messageBytes);
    const full = getBase64EncodedWireTransaction({
      ...tx,
      signatures: { ...tx.signatures, [sponsor.address]: sig },
    } as never);
    expect(await rpc.sendTransaction(full, { encoding: 'base64', skipPreflight: true }).send()).toBe(
      payment.txId,
    );
    expect(await sponsor.settle(payment)).toMatchObject({ ok: false, reason: 'transaction_failed' });
  });

  it('waits for finalized when asked to', async () => {
    const final = await makeSponsor({ commitment: 'finalized', caip2: SOLANA_MAINNET_CAIP2 });
    const payer = await newPayer();
    const { payload, memo } = await stockPayload(payer);
    const payment = await checked(payload, expected(memo), final);
    sb.setFault('hold_finality');
    let done = false;
    const settling = final.settle(payment).finally(() => {
      done = true;
    });
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(done).toBe(false);
    } finally {
      sb.setFault('none');
    }
    sb.finalizeAll();
    expect(await settling).toEqual({ ok: true, txId: payment.txId });
  });

  it('throws ChainUnavailableError when the node is down, and settles once it is back', async () => {
    const payer = await newPayer();
    const { payload, memo } = await stockPayload(payer);
    sb.setFault('rpc_down');
    try {
      await expect(sponsor.check(payload, expected(memo))).rejects.toBeInstanceOf(ChainUnavailableError);
      await expect(sponsor.balanceLamports()).rejects.toBeInstanceOf(ChainUnavailableError);
    } finally {
      sb.setFault('none');
    }
    const payment = await checked(payload, expected(memo));
    sb.setFault('rpc_down');
    try {
      await expect(sponsor.settle(payment)).rejects.toBeInstanceOf(ChainUnavailableError);
    } finally {
      sb.setFault('none');
    }
    expect(await sponsor.settle(payment)).toEqual({ ok: true, txId: payment.txId });
  });

  it('lands a transaction whose first send was lost on the way, or whose answer was', async () => {
    const proxy = await startSendProxy(sb.url);
    try {
      const viaProxy = await makeSponsor({ rpcUrl: proxy.url, caip2: SOLANA_MAINNET_CAIP2 });
      for (const mode of ['drop', 'lose_answer'] as const) {
        const payer = await newPayer();
        const { payload, memo } = await stockPayload(payer);
        const payment = await checked(payload, expected(memo), viaProxy);
        proxy.failNextSend(mode);
        expect(await viaProxy.settle(payment)).toEqual({ ok: true, txId: payment.txId });
        expect(proxy.sends).toBeGreaterThanOrEqual(mode === 'drop' ? 2 : 1);
        expect(await usdc(payer.address)).toBe(10_000_000n - AMOUNT);
      }
    } finally {
      await proxy.close();
    }
  });

  it('tells an unfunded sponsor apart from a refused payment: ChainUnavailableError', async () => {
    const broke = await createSolanaSponsor({
      ...fast,
      rpcUrl: sb.url,
      secretKey: newSolanaKey().secretKey,
      network: 'localnet',
    });
    const payer = await newPayer();
    const client = new ExactSvmScheme(toClientSvmSigner(payer as never), { rpcUrl: sb.url });
    const memo = nextMemo();
    const { payload } = await client.createPaymentPayload(2, {
      scheme: 'exact',
      network: SOLANA_MAINNET_CAIP2,
      amount: String(AMOUNT),
      asset: sb.mint,
      payTo,
      maxTimeoutSeconds: 60,
      extra: broke.extra(memo),
    } as never);
    await expect(broke.check(payload as never, expected(memo))).rejects.toThrow(/cannot pay the fee/);
    expect(await broke.balanceLamports()).toBe(0n);
  });

  it('refuses to work against a node of another network', async () => {
    const devnet = await makeSponsor({ caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1' });
    const payer = await newPayer();
    const { payload, memo } = await stockPayload(payer);
    await expect(devnet.check(payload, expected(memo))).rejects.toThrow(/genesis/);
  });

  it('settles only what it checked', async () => {
    await expect(sponsor.settle({ txId: 'x', payer: 'y', handle: {} })).rejects.toThrow(TypeError);
    const other = await makeSponsor({ caip2: SOLANA_MAINNET_CAIP2 });
    const payer = await newPayer();
    const { payload, memo } = await stockPayload(payer);
    const payment = await checked(payload, expected(memo), other);
    await expect(sponsor.settle(payment)).rejects.toThrow(TypeError);
  });

  describe('refuses offers the payment does not match (stock client payloads)', () => {
    let payer: KeyPairSigner;
    beforeAll(async () => {
      payer = await newPayer();
      await sb.mintOther(payer.address, 10_000_000n);
    });

    it('amount', async () => {
      const { payload, memo } = await stockPayload(payer, { amount: AMOUNT - 1n });
      await expectRefused(payload, expected(memo), 'invalid_exact_svm_payload_amount_mismatch');
    });
    it('payTo', async () => {
      const { payload, memo } = await stockPayload(payer, { payTo: attacker });
      await expectRefused(payload, expected(memo), 'invalid_exact_svm_payload_recipient_mismatch');
    });
    it('mint', async () => {
      const { payload, memo } = await stockPayload(payer, { asset: sb.otherMint });
      await expectRefused(payload, expected(memo), 'invalid_exact_svm_payload_mint_mismatch');
      // Nor does the sponsor pay for another asset even when that is what was offered.
      await expectRefused(
        payload,
        expected(memo, { asset: sb.otherMint }),
        'invalid_exact_svm_payload_mint_mismatch',
      );
    });
    it('memo', async () => {
      const { payload } = await stockPayload(payer);
      await expectRefused(payload, expected('another memo'), 'invalid_exact_svm_payload_memo_mismatch');
    });
    it('fee payer', async () => {
      const { payload, memo } = await stockPayload(payer, { feePayer: attacker });
      await expectRefused(payload, expected(memo), 'invalid_exact_svm_fee_payer_mismatch');
    });
    it('bytes changed after signing (amount raised in the wire)', async () => {
      const { payload, memo } = await stockPayload(payer);
      const bytes = new Uint8Array(getBase64Encoder().encode(payload.transaction));
      const tx = getTransactionDecoder().decode(bytes);
      // Find the TransferChecked data (12, u64 amount, 6) in the message and raise the amount.
      const msg = new Uint8Array(tx.messageBytes);
      const le = new Uint8Array(8);
      new DataView(le.buffer).setBigUint64(0, AMOUNT, true);
      const at = msg.findIndex(
        (b, i) => b === 12 && le.every((x, j) => msg[i + 1 + j] === x) && msg[i + 9] === 6,
      );
      expect(at).toBeGreaterThan(0);
      const offset = bytes.length - msg.length + at + 1;
      bytes[offset] = (bytes[offset] ?? 0) + 1;
      const tampered = { transaction: Buffer.from(bytes).toString('base64') };
      await expectRefused(
        tampered,
        expected(memo, { amount: AMOUNT + 1n }),
        'invalid_exact_svm_payload_signature_invalid',
      );
    });
  });

  describe('refuses transactions that could make the sponsor pay', () => {
    let payer: KeyPairSigner;
    beforeAll(async () => {
      payer = await newPayer();
    });
    const sponsorNoop = () => createNoopSigner(address(sponsor.address));

    it('the sponsor as transfer source and authority', async () => {
      const { payload, memo } = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: sponsorNoop() }),
          memoIx(m, [payer]),
        ],
      });
      // Co-signed, it would move the sponsor's USDC to payTo.
      expect((await simulateCosigned(payload.transaction)).err).toBeNull();
      await expectRefused(
        payload,
        expected(memo),
        'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds',
      );
    });

    it('the sponsor in any instruction (a memo it would sign)', async () => {
      const { payload, memo } = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: payer }),
          memoIx(m, [sponsorNoop()]),
        ],
      });
      await expectRefused(
        payload,
        expected(memo),
        'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds',
      );
    });

    it('an extra instruction: a SystemProgram transfer of the sponsor SOL', async () => {
      const { payload, memo } = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: payer }),
          memoIx(m),
          systemTransfer(sponsorNoop(), attacker, 100_000_000n),
        ],
      });
      expect((await simulateCosigned(payload.transaction)).err).toBeNull();
      await expectRefused(
        payload,
        expected(memo),
        'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds',
      );
    });

    it('an extra instruction that does not touch the sponsor', async () => {
      const { payload, memo } = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: payer }),
          memoIx(m),
          systemTransfer(payer, attacker, 1n),
        ],
      });
      await expectRefused(
        payload,
        expected(memo),
        'invalid_exact_svm_payload_transaction_instructions_length',
      );
    });

    it('an extra signer', async () => {
      const extra = await generateKeyPairSigner();
      const { payload, memo } = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: payer }),
          memoIx(m, [payer, extra]),
        ],
      });
      await expectRefused(payload, expected(memo), 'invalid_exact_svm_payload_excessive_signers');
    });

    it('a compute price or limit above the caps', async () => {
      const pricey = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(2_000_000n),
          await transfer({ authority: payer }),
          memoIx(m),
        ],
      });
      await expectRefused(
        pricey.payload,
        expected(pricey.memo),
        'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
      );
      const big = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(1_400_000),
          computePrice(1n),
          await transfer({ authority: payer }),
          memoIx(m),
        ],
      });
      await expectRefused(
        big.payload,
        expected(big.memo),
        'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high',
      );
      // Within a lower cap of one's own, or not.
      const strict = await makeSponsor({ caip2: SOLANA_MAINNET_CAIP2, maxComputeUnitPrice: 0 });
      const { payload, memo } = await stockPayload(payer);
      await expectRefused(
        payload,
        expected(memo),
        'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
        strict,
      );
    });

    it('compute budget instructions out of order or missing', async () => {
      const swapped = await handBuilt(payer, {
        instructions: async (m) => [
          computePrice(1n),
          computeLimit(20_000),
          await transfer({ authority: payer }),
          memoIx(m),
        ],
      });
      await expectRefused(
        swapped.payload,
        expected(swapped.memo),
        'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction',
      );
      const none = await handBuilt(payer, {
        instructions: async (m) => [await transfer({ authority: payer }), memoIx(m)],
      });
      await expectRefused(
        none.payload,
        expected(none.memo),
        'invalid_exact_svm_payload_transaction_instructions_length',
      );
    });

    it('no memo, two memos', async () => {
      const none = await handBuilt(payer, {
        instructions: async () => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: payer }),
        ],
      });
      await expectRefused(none.payload, expected(none.memo), 'invalid_exact_svm_payload_memo_count');
      const two = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: payer }),
          memoIx(m),
          memoIx(m),
        ],
      });
      await expectRefused(two.payload, expected(two.memo), 'invalid_exact_svm_payload_memo_count');
    });

    it('a source that is not the payer’s token account, or another authority', async () => {
      const victim = await newPayer();
      const fromVictim = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: payer, source: await ata(victim.address) }),
          memoIx(m),
        ],
      });
      await expectRefused(
        fromVictim.payload,
        expected(fromVictim.memo),
        'invalid_exact_svm_payload_source_mismatch',
      );

      const otherAuthority = await handBuilt(payer, {
        instructions: async (m) => {
          const ix = await transfer({
            authority: createNoopSigner(victim.address),
            source: await ata(victim.address),
          });
          // The authority as a plain account (no signature): the payer signs only the memo.
          const accounts = [...ix.accounts!];
          accounts[3] = { address: victim.address, role: AccountRole.READONLY };
          return [computeLimit(20_000), computePrice(1n), { ...ix, accounts }, memoIx(m, [payer])];
        },
      });
      await expectRefused(
        otherAuthority.payload,
        expected(otherAuthority.memo),
        'invalid_exact_svm_payload_payer_not_authority',
      );
    });

    it('wrong decimals', async () => {
      const { payload, memo } = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: payer, decimals: 9 }),
          memoIx(m),
        ],
      });
      await expectRefused(payload, expected(memo), 'invalid_exact_svm_payload_decimals_mismatch');
    });

    it('an address lookup table, a legacy message', async () => {
      const table = (await generateKeyPairSigner()).address;
      const alt = await handBuilt(payer, { lookupTables: { [table]: [await ata(payTo)] } });
      await expectRefused(alt.payload, expected(alt.memo), 'invalid_exact_svm_payload_address_lookup_tables');
      const legacy = await handBuilt(payer, { version: 'legacy' });
      await expectRefused(
        legacy.payload,
        expected(legacy.memo),
        'invalid_exact_svm_payload_unsupported_version',
      );
    });

    it('a signature in the sponsor’s slot, or none from the payer', async () => {
      const { payload, memo } = await stockPayload(payer);
      const tx = getTransactionDecoder().decode(getBase64Encoder().encode(payload.transaction));
      const filled = {
        ...tx,
        signatures: { ...tx.signatures, [sponsor.address]: new Uint8Array(64).fill(7) },
      };
      await expectRefused(
        { transaction: getBase64EncodedWireTransaction(filled as never) },
        expected(memo),
        'invalid_exact_svm_payload_signature_invalid',
      );
      const unsigned = await handBuilt(payer, {
        instructions: async (m) => [
          computeLimit(20_000),
          computePrice(1n),
          await transfer({ authority: createNoopSigner(payer.address) }),
          memoIx(m),
        ],
      });
      await expectRefused(
        unsigned.payload,
        expected(unsigned.memo),
        'invalid_exact_svm_payload_signature_invalid',
      );
    });

    it('payloads that are not a transaction', async () => {
      const reason = 'invalid_exact_svm_payload_transaction_could_not_be_decoded';
      const m = expected('x');
      await expectRefused({}, m, reason);
      await expectRefused({ transaction: 42 }, m, reason);
      await expectRefused({ transaction: 'not base64!' }, m, reason);
      await expectRefused({ transaction: 'A'.repeat(4000) }, m, reason);
      await expectRefused({ transaction: 'AAAA' }, m, reason);
      const { payload, memo } = await stockPayload(payer);
      const trailing = Buffer.concat([Buffer.from(payload.transaction, 'base64'), Buffer.from([0])]);
      await expectRefused({ transaction: trailing.toString('base64') }, expected(memo), reason);
    });
  });

  describe('refuses what the chain would refuse, after simulating', () => {
    it('a payer without a USDC account', async () => {
      const payer = await generateKeyPairSigner();
      await sb.faucet(payer.address, 0n); // creates an empty account...
      const { payload, memo } = await stockPayload(payer);
      const noAccount = await generateKeyPairSigner();
      // ...but this one has none at all: its transaction is built by hand.
      const built = await handBuilt(noAccount, { memo });
      await expectRefused(built.payload, expected(memo), 'invalid_exact_svm_transaction_simulation_failed');
      // And the one with an empty account lacks the funds.
      await expectRefused(payload, expected(memo), 'insufficient_funds');
    });

    it('a payer with less than the amount', async () => {
      const payer = await newPayer(AMOUNT - 1n);
      const { payload, memo } = await stockPayload(payer);
      const result = await expectRefused(payload, expected(memo), 'insufficient_funds');
      expect(result.ok ? '' : result.message).toMatch(/InstructionError/);
    });

    it('a recipient without a USDC account', async () => {
      const payer = await newPayer();
      const nowhere = (await generateKeyPairSigner()).address;
      const { payload, memo } = await stockPayload(payer, { payTo: nowhere });
      await expectRefused(
        payload,
        expected(memo, { payTo: nowhere }),
        'invalid_exact_svm_transaction_simulation_failed',
      );
    });
  });

  it('limits sponsored transactions per payer per minute', async () => {
    const limited = await makeSponsor({ caip2: SOLANA_MAINNET_CAIP2, maxPerPayerPerMinute: 2 });
    const payer = await newPayer();
    const one = await stockPayload(payer);
    const two = await stockPayload(payer);
    const three = await stockPayload(payer);
    await checked(one.payload, expected(one.memo), limited);
    await checked(two.payload, expected(two.memo), limited);
    // The same payment again is not another one.
    await checked(one.payload, expected(one.memo), limited);
    await expectRefused(three.payload, expected(three.memo), 'sponsor_rate_limited', limited);
    // Another payer is not affected.
    const other = await newPayer();
    const theirs = await stockPayload(other);
    await checked(theirs.payload, expected(theirs.memo), limited);
  });
});

/**
 * A proxy in front of the sandbox that fails the next sendTransaction once: `drop` never
 * forwards it, `lose_answer` forwards it and answers HTTP 502 (it landed; nobody heard).
 */
async function startSendProxy(target: string) {
  let next: 'drop' | 'lose_answer' | null = null;
  let sends = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const isSend = (JSON.parse(body.toString('utf8')) as { method?: string }).method === 'sendTransaction';
    if (isSend) sends++;
    const mode = isSend ? next : null;
    if (isSend) next = null;
    if (mode === 'drop') {
      res.statusCode = 502;
      return res.end('bad gateway');
    }
    const upstream = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await upstream.text();
    if (mode === 'lose_answer') {
      res.statusCode = 502;
      return res.end('bad gateway');
    }
    res.statusCode = upstream.status;
    res.setHeader('content-type', 'application/json');
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get sends() {
      return sends;
    },
    failNextSend(mode: 'drop' | 'lose_answer') {
      next = mode;
      sends = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The payer moves all its USDC elsewhere, paying its own fee. */
async function spendAll(payer: KeyPairSigner) {
  const amount = await usdc(payer.address);
  await sb.faucet(attacker, 0n, 0n);
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions([], m),
  );
  const ix = await transfer({ authority: payer, to: attacker, amount });
  const tx = await signTransactionMessageWithSigners(appendTransactionMessageInstructions([ix], message));
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  expect(getSignatureFromTransaction(tx)).toBeTruthy();
  expect(await usdc(payer.address)).toBe(0n);
}
