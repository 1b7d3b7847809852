import { RpcError } from '@mysten/sui/grpc';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { Transaction, TransactionDataBuilder } from '@mysten/sui/transactions';
import { normalizeStructTag, toBase58, toBase64 } from '@mysten/sui/utils';
import { USDC_SUI_COIN_TYPE } from '@tollgate/protocol';
import { describe, expect, it, vi } from 'vitest';
import { ChainUnavailableError } from '../chain.ts';
import type { ExpectedTransfer, PaymentCheck } from '../exact-v2.ts';
import type { SuiExactV2Client } from './exact-v2.ts';
import { createSuiExactV2, judgeBalanceChanges } from './exact-v2.ts';

const USDC = normalizeStructTag(USDC_SUI_COIN_TYPE);
const SUI = normalizeStructTag('0x2::sui::SUI');
const LOOKALIKE = normalizeStructTag(`0x${'ab'.repeat(32)}::usdc::USDC`);
const CHAIN = toBase58(new Uint8Array(32).fill(7));
const payer = Ed25519Keypair.generate();
const SENDER = payer.toSuiAddress();
const PAY_TO = Ed25519Keypair.generate().toSuiAddress();
const OTHER = Ed25519Keypair.generate().toSuiAddress();
const MEMO = 'tollgate:v1:00112233445566778899aabbccddeeff';
const AMOUNT = 10_000n;
const GAS = 1_059_280n;

const ref = (n: number) => ({
  objectId: `0x${n.toString(16).padStart(64, '0')}`,
  version: String(n),
  digest: toBase58(new Uint8Array(32).fill(n)),
});

/** A complete transaction built and signed offline (no node). */
async function signedPayload(): Promise<{ transaction: string; signature: string; digest: string }> {
  const tx = new Transaction();
  tx.setSender(SENDER);
  tx.setGasPayment([ref(1)]);
  tx.setGasPrice(1000);
  tx.setGasBudget(10_000_000);
  const [part] = tx.splitCoins(tx.objectRef(ref(2)), [tx.pure.u64(AMOUNT)]);
  tx.transferObjects([part!], PAY_TO);
  tx.pure.string(MEMO);
  const bytes = await tx.build();
  const { signature } = await payer.signTransaction(bytes);
  return {
    transaction: toBase64(bytes),
    signature,
    digest: TransactionDataBuilder.getDigestFromBytes(bytes),
  };
}

const expected: ExpectedTransfer = { payTo: PAY_TO, amount: AMOUNT, asset: USDC, memo: MEMO };

const goodChanges = () => [
  { address: SENDER, coinType: SUI, amount: (-GAS).toString() },
  { address: SENDER, coinType: USDC, amount: (-AMOUNT).toString() },
  { address: PAY_TO, coinType: USDC, amount: AMOUNT.toString() },
];

function txResult(o: { success?: boolean; checkpoint?: string | null; changes?: unknown[] } = {}) {
  const body = {
    status:
      o.success === false
        ? { success: false, error: { message: 'InsufficientCoinBalance' } }
        : { success: true, error: null },
    checkpoint: o.checkpoint === undefined ? '1001' : o.checkpoint,
    balanceChanges: o.changes ?? goodChanges(),
    effects: { gasUsed: { computationCost: '1000000', storageCost: '5928000', storageRebate: '5868720' } },
  };
  return o.success === false
    ? { $kind: 'FailedTransaction', FailedTransaction: body }
    : { $kind: 'Transaction', Transaction: body };
}

const notFound = () => new RpcError('Transaction not found', 'NOT_FOUND');

function fakeClient(over: Partial<{ [K in keyof SuiExactV2Client['core']]: () => Promise<unknown> }> = {}) {
  return {
    core: {
      getChainIdentifier: vi.fn(async () => ({ chainIdentifier: CHAIN })),
      getTransaction: vi.fn(over.getTransaction ?? (async () => Promise.reject(notFound()))),
      simulateTransaction: vi.fn(over.simulateTransaction ?? (async () => txResult({ checkpoint: null }))),
      executeTransaction: vi.fn(over.executeTransaction ?? (async () => txResult())),
    },
  } satisfies SuiExactV2Client;
}

const scheme = (client: SuiExactV2Client) =>
  createSuiExactV2({
    rpcUrl: 'http://127.0.0.1:9',
    network: 'localnet',
    caip2: `sui:${CHAIN}`,
    coinType: USDC_SUI_COIN_TYPE,
    client,
    timeoutMs: 1000,
    confirmTimeoutMs: 300,
  });

function ok(r: PaymentCheck): asserts r is Extract<PaymentCheck, { ok: true }> {
  if (!r.ok) throw new Error(`${r.reason}: ${r.message}`);
}

describe('judgeBalanceChanges', () => {
  const t = { sender: SENDER, payTo: PAY_TO, asset: USDC, amount: AMOUNT, gas: GAS };
  const lines = (...c: [string, string, bigint][]) =>
    c.map(([address, coinType, amount]) => ({ address, coinType, amount }));
  const good = lines([SENDER, SUI, -GAS], [SENDER, USDC, -AMOUNT], [PAY_TO, USDC, AMOUNT]);
  const reason = (l: ReturnType<typeof lines>, over = {}) =>
    judgeBalanceChanges(l, { ...t, ...over })?.reason ?? null;

  it('accepts exactly payTo +amount, sender -amount, sender -gas in SUI', () => {
    expect(reason(good)).toBeNull();
    // A storage rebate larger than the gas: the sender's SUI goes up, by exactly that much.
    expect(
      reason(lines([SENDER, SUI, 5n], [SENDER, USDC, -AMOUNT], [PAY_TO, USDC, AMOUNT]), { gas: -5n }),
    ).toBeNull();
    // Lines split per coin object add up.
    expect(
      reason([
        ...lines([SENDER, USDC, -1n], [SENDER, USDC, -(AMOUNT - 1n)]),
        ...good.filter((l) => l.coinType !== USDC || l.address !== SENDER),
      ]),
    ).toBeNull();
  });

  it.each([
    ['payTo not credited', lines([SENDER, SUI, -GAS]), 'invalid_exact_sui_payload_recipient_mismatch'],
    [
      'payTo credited 1 less',
      lines([SENDER, SUI, -GAS], [SENDER, USDC, 1n - AMOUNT], [PAY_TO, USDC, AMOUNT - 1n]),
      'invalid_exact_sui_payload_amount_mismatch',
    ],
    [
      'payTo credited 1 more',
      lines([SENDER, SUI, -GAS], [SENDER, USDC, -AMOUNT - 1n], [PAY_TO, USDC, AMOUNT + 1n]),
      'invalid_exact_sui_payload_amount_mismatch',
    ],
    ['a third payee', [...good, ...lines([OTHER, USDC, 1n])], 'invalid_exact_sui_payload_recipient_mismatch'],
    [
      'someone else pays',
      lines([SENDER, SUI, -GAS], [OTHER, USDC, -AMOUNT], [PAY_TO, USDC, AMOUNT]),
      'invalid_exact_sui_payload_recipient_mismatch',
    ],
    [
      'sender pays more than payTo gets (into a shared object)',
      lines([SENDER, SUI, -GAS], [SENDER, USDC, -AMOUNT - 7n], [PAY_TO, USDC, AMOUNT]),
      'invalid_exact_sui_payload_amount_mismatch',
    ],
    [
      'another coin type moves',
      [...good, ...lines([PAY_TO, LOOKALIKE, 1n])],
      'invalid_exact_sui_payload_asset_mismatch',
    ],
    [
      'SUI to someone else',
      [...good, ...lines([OTHER, SUI, 1n])],
      'invalid_exact_sui_payload_asset_mismatch',
    ],
    [
      'sender SUI beyond gas',
      lines([SENDER, SUI, -GAS - 1n], [SENDER, USDC, -AMOUNT], [PAY_TO, USDC, AMOUNT]),
      'invalid_exact_sui_payload_asset_mismatch',
    ],
  ])('refuses %s', (_name, l, want) => {
    expect(reason(l)).toBe(want);
  });

  it('when the asset is SUI, the sender pays amount plus gas', () => {
    const sui = { asset: SUI };
    expect(reason(lines([SENDER, SUI, -AMOUNT - GAS], [PAY_TO, SUI, AMOUNT]), sui)).toBeNull();
    expect(reason(lines([SENDER, SUI, -AMOUNT - GAS - 1n], [PAY_TO, SUI, AMOUNT]), sui)).toBe(
      'invalid_exact_sui_payload_amount_mismatch',
    );
  });
});

describe('createSuiExactV2 against a fake node', () => {
  it('checks a good payload and asks the chain id once', async () => {
    const client = fakeClient();
    const s = scheme(client);
    const p = await signedPayload();
    const r = await s.check(p, expected);
    ok(r);
    expect(r).toMatchObject({ txId: p.digest, payer: SENDER });
    ok(await s.check(p, expected));
    expect(client.core.getChainIdentifier).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['a truncated Ed25519 signature', new Uint8Array(66)],
    ['an Ed25519 signature with a short public key', new Uint8Array(90)],
    ['an unknown signature flag', Uint8Array.from([9, ...new Uint8Array(96)])],
  ])('a malformed signature (%s) is a refusal, not a node outage', async (_name, raw) => {
    const p = await signedPayload();
    const r = await scheme(fakeClient()).check({ ...p, signature: toBase64(raw) }, expected);
    expect(r).toMatchObject({ ok: false, reason: 'invalid_exact_sui_payload_signature' });
  });

  it('simulate: false asks nothing', async () => {
    const client = fakeClient();
    ok(await scheme(client).check(await signedPayload(), expected, { simulate: false }));
    expect(client.core.getChainIdentifier).not.toHaveBeenCalled();
    expect(client.core.simulateTransaction).not.toHaveBeenCalled();
  });

  it.each([
    [
      'INVALID_ARGUMENT',
      () => Promise.reject(new RpcError('object version unavailable', 'INVALID_ARGUMENT')),
      'simulation_failed',
    ],
    ['a failed dry run', async () => txResult({ success: false }), 'simulation_failed'],
  ])('simulation: %s is a refusal', async (_name, simulateTransaction, want) => {
    const r = await scheme(fakeClient({ simulateTransaction })).check(await signedPayload(), expected);
    expect(r).toMatchObject({ ok: false, reason: want });
  });

  it.each([
    [
      'simulate UNAVAILABLE',
      { simulateTransaction: () => Promise.reject(new RpcError('down', 'UNAVAILABLE')) },
    ],
    [
      'simulate DEADLINE_EXCEEDED',
      { simulateTransaction: () => Promise.reject(new RpcError('slow', 'DEADLINE_EXCEEDED')) },
    ],
    [
      'getTransaction INTERNAL',
      { getTransaction: () => Promise.reject(new RpcError('fetch failed', 'INTERNAL')) },
    ],
    [
      'a malformed simulation',
      {
        simulateTransaction: async () => ({
          $kind: 'Transaction',
          Transaction: { balanceChanges: [{ amount: 'x' }] },
        }),
      },
    ],
    [
      'a simulation without gas summary',
      {
        simulateTransaction: async () => ({
          $kind: 'Transaction',
          Transaction: { status: { success: true } },
        }),
      },
    ],
  ])('check: %s is ChainUnavailableError', async (_name, over) => {
    await expect(scheme(fakeClient(over)).check(await signedPayload(), expected)).rejects.toBeInstanceOf(
      ChainUnavailableError,
    );
  });

  it('check: a transaction the node already has is transaction_already_executed', async () => {
    const r = await scheme(fakeClient({ getTransaction: async () => txResult() })).check(
      await signedPayload(),
      expected,
    );
    expect(r).toMatchObject({ ok: false, reason: 'transaction_already_executed' });
  });

  describe('settle', () => {
    async function checked(client: SuiExactV2Client) {
      const s = scheme(client);
      const r = await s.check(await signedPayload(), expected, { simulate: false });
      ok(r);
      return { s, r };
    }

    it('executes the signed bytes with the payer’s signature', async () => {
      const client = fakeClient();
      const { s, r } = await checked(client);
      expect(await s.settle(r)).toEqual({ ok: true, txId: r.txId });
      const p = await signedPayload();
      const [call] = client.core.executeTransaction.mock.calls[0] as unknown as [
        { transaction: Uint8Array; signatures: string[] },
      ];
      expect(toBase64(call.transaction)).toBe(p.transaction);
      expect(call.signatures).toEqual([p.signature]);
    });

    it('a refusal to execute, because a concurrent settle already ran it: confirmed by digest', async () => {
      let calls = 0;
      const client = fakeClient({
        getTransaction: async () => (calls++ === 0 ? Promise.reject(notFound()) : txResult()),
        executeTransaction: () => Promise.reject(new RpcError('object locked', 'FAILED_PRECONDITION')),
      });
      const { s, r } = await checked(client);
      expect(await s.settle(r)).toEqual({ ok: true, txId: r.txId });
    });

    it('a refusal to execute of a transaction that never ran: transaction_rejected', async () => {
      const client = fakeClient({
        executeTransaction: () => Promise.reject(new RpcError('version unavailable', 'INVALID_ARGUMENT')),
      });
      const { s, r } = await checked(client);
      expect(await s.settle(r)).toMatchObject({ ok: false, reason: 'transaction_rejected' });
    });

    it('an outage or a timeout while executing: ChainUnavailableError (it may have landed)', async () => {
      const client = fakeClient({
        executeTransaction: () => Promise.reject(new RpcError('down', 'UNAVAILABLE')),
      });
      const { s, r } = await checked(client);
      await expect(s.settle(r)).rejects.toBeInstanceOf(ChainUnavailableError);
    });

    it('a transaction that ran and failed: transaction_failed', async () => {
      const client = fakeClient({ executeTransaction: async () => txResult({ success: false }) });
      const { s, r } = await checked(client);
      expect(await s.settle(r)).toMatchObject({ ok: false, reason: 'transaction_failed' });
    });

    it('a landed transaction that did not credit payTo as checked is not a settlement', async () => {
      const client = fakeClient({
        executeTransaction: async () =>
          txResult({ changes: goodChanges().filter((c) => c.address !== PAY_TO) }),
      });
      const { s, r } = await checked(client);
      expect(await s.settle(r)).toMatchObject({
        ok: false,
        reason: 'invalid_exact_sui_payload_amount_mismatch',
      });
    });

    it('polls until the transaction has a checkpoint', async () => {
      let polls = 0;
      const client = fakeClient({
        getTransaction: async () =>
          polls++ === 0 ? Promise.reject(notFound()) : txResult({ checkpoint: polls > 2 ? '7' : null }),
        executeTransaction: async () => txResult({ checkpoint: null }),
      });
      const { s, r } = await checked(client);
      expect(await s.settle(r)).toEqual({ ok: true, txId: r.txId });
      expect(polls).toBeGreaterThanOrEqual(3);
    });

    it('refuses a handle it did not make', async () => {
      const s = scheme(fakeClient());
      await expect(s.settle({ txId: 'x', payer: SENDER, handle: {} })).rejects.toBeInstanceOf(TypeError);
    });
  });
});
