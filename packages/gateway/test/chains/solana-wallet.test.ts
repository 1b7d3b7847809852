/**
 * The payer's Solana wallet against the sandbox chain, checked by the gateway's
 * production verifier: what the SDK pays is exactly what the gateway accepts.
 */
import { createSolanaRpc, generateKeyPairSigner } from '@solana/kit';
import type { AcceptOption } from '@tollgate/protocol';
import { memoForNonce, parseAmount } from '@tollgate/protocol';
import type { SolanaSandbox } from '@tollgate/sandbox';
import { newSolanaKey, startSolanaSandbox } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SolanaPaymentError, solanaWallet } from '../../../client/src/wallets/solana.ts';
import type { ChainVerifier, OfferedOption } from '../../src/chains/chain.ts';
import { createSolanaVerifier } from '../../src/chains/solana/index.ts';
import { ata } from './solana-harness.ts';

let sb: SolanaSandbox;
let rpc: ReturnType<typeof createSolanaRpc>;
let verifier: ChainVerifier;
let key: { secretKey: Uint8Array; address: string };
let provider: string;
let platform: string;

beforeAll(async () => {
  sb = await startSolanaSandbox();
  rpc = createSolanaRpc(sb.url);
  verifier = createSolanaVerifier({ rpcUrl: sb.url, network: 'localnet' });
  key = newSolanaKey();
  await sb.faucet(key.address, 10_000_000n);
  provider = (await generateKeyPairSigner()).address;
  platform = (await generateKeyPairSigner()).address;
});
afterAll(() => sb?.close());

let n = 0;
function option(overrides: Partial<AcceptOption> = {}): AcceptOption {
  return {
    chain: 'solana',
    network: 'localnet',
    asset: 'USDC',
    totalAmount: '0.25',
    decimals: 6,
    mint: sb.mint,
    splits: [
      { recipientType: 'provider', payTo: provider, amount: '0.2375' },
      { recipientType: 'platform', payTo: platform, amount: '0.0125' },
    ],
    memo: memoForNonce(`wallet-test-${++n}-${Date.now()}`),
    ...overrides,
  };
}

async function verify(opt: AcceptOption, tx: string, payer = key.address) {
  const offered: OfferedOption = {
    chain: 'solana',
    network: opt.network,
    asset: opt.mint!,
    memo: opt.memo,
    splits: opt.splits.map((s) => ({ ...s, amount: parseAmount(s.amount, opt.decimals) })),
  };
  const now = Date.now();
  return verifier.verify({
    option: offered,
    issuedAtMs: now - 60_000,
    expiresAtMs: now + 240_000,
    skewMs: 30_000,
    payer,
    txHashOrDigest: tx,
  });
}

const usdcOf = async (owner: string) => {
  const { value } = await rpc.getTokenAccountBalance(await ata(owner, sb.mint)).send();
  return BigInt(value.amount);
};

describe('solanaWallet', () => {
  it('pays a two-leg option in one transaction that the production verifier accepts', async () => {
    const w = solanaWallet({ secretKey: key.secretKey, rpcUrl: sb.url, pollIntervalMs: 20 });
    const before = await usdcOf(key.address);
    const opt = option();
    const tx = await w.pay(opt);
    expect(await verify(opt, tx)).toMatchObject({
      status: 'verified',
      legs: [
        { owner: provider, delta: 237_500n },
        { owner: platform, delta: 12_500n },
      ],
    });
    expect(before - (await usdcOf(key.address))).toBe(250_000n);
  });

  it('pays the same option twice as two distinct transactions', async () => {
    const w = solanaWallet({ secretKey: key.secretKey, rpcUrl: sb.url, pollIntervalMs: 20 });
    const opt = option();
    const first = await w.pay(opt);
    const second = await w.pay(opt);
    expect(second).not.toBe(first);
    expect((await verify(opt, first)).status).toBe('verified');
    expect((await verify(opt, second)).status).toBe('verified');
  });

  it('pays the sum when provider and platform are the same wallet, and skips zero legs', async () => {
    const w = solanaWallet({ secretKey: key.secretKey, rpcUrl: sb.url, pollIntervalMs: 20 });
    const same = (await generateKeyPairSigner()).address;
    const opt = option({
      totalAmount: '0.35',
      splits: [
        { recipientType: 'provider', payTo: same, amount: '0.3' },
        { recipientType: 'platform', payTo: same, amount: '0.05' },
        { recipientType: 'platform', payTo: platform, amount: '0' },
      ],
    });
    const tx = await w.pay(opt);
    expect((await verify(opt, tx)).status).toBe('verified');
    expect(await usdcOf(same)).toBe(350_000n);
  });

  it('waits for finalized when asked to', async () => {
    const w = solanaWallet({
      secretKey: key.secretKey,
      rpcUrl: sb.url,
      commitment: 'finalized',
      pollIntervalMs: 20,
    });
    const opt = option();
    const before = await usdcOf(key.address);
    sb.setFault('hold_finality');
    const paying = w.pay(opt);
    let settled = false;
    void paying.then(() => {
      settled = true;
    });
    try {
      // Once the money has moved, the transaction is on-chain but held at confirmed...
      for (let i = 0; i < 250 && (await usdcOf(key.address)) === before; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await usdcOf(key.address)).toBe(before - 250_000n);
      // ...and the wallet keeps polling instead of returning.
      await new Promise((r) => setTimeout(r, 200));
      expect(settled).toBe(false);
    } finally {
      sb.setFault('none');
    }
    sb.finalizeAll();
    const tx = await paying;
    expect((await rpc.getSignatureStatuses([tx as never]).send()).value[0]?.confirmationStatus).toBe(
      'finalized',
    );
  });

  it('hands back the signature when aborted after sending, since the money may move', async () => {
    const w = solanaWallet({
      secretKey: key.secretKey,
      rpcUrl: sb.url,
      commitment: 'finalized',
      pollIntervalMs: 20,
    });
    const before = await usdcOf(key.address);
    const ctl = new AbortController();
    sb.setFault('hold_finality');
    try {
      const paying = w.pay(option(), { signal: ctl.signal }).catch((e: unknown) => e);
      for (let i = 0; i < 250 && (await usdcOf(key.address)) === before; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      ctl.abort();
      const err = await paying;
      expect(err).toBeInstanceOf(SolanaPaymentError);
      const { signature } = err as SolanaPaymentError;
      expect(signature).toBeTypeOf('string');
      const status = await rpc.getSignatureStatuses([signature as never]).send();
      expect(status.value[0]?.confirmationStatus).toBe('confirmed');
    } finally {
      sb.setFault('none');
      sb.finalizeAll();
    }
  });

  it('refuses options it cannot pay, before sending anything', async () => {
    const w = solanaWallet({ secretKey: key.secretKey, rpcUrl: sb.url });
    const before = await usdcOf(key.address);
    const cases: [Partial<AcceptOption>, string][] = [
      [{ chain: 'sui' }, 'unsupported_chain'],
      [{ mint: undefined }, 'invalid_requirement'],
      [{ mint: 'not-a-mint' }, 'invalid_requirement'],
      [{ memo: '' }, 'invalid_requirement'],
      [{ splits: [{ recipientType: 'provider', payTo: provider, amount: '0' }] }, 'invalid_requirement'],
      [{ splits: [{ recipientType: 'provider', payTo: '0xabc', amount: '1' }] }, 'invalid_requirement'],
      [{ mint: provider }, 'invalid_requirement'],
      [{ mint: sb.otherMint }, 'invalid_requirement'],
      [{ decimals: 9 }, 'invalid_requirement'],
      [{ totalAmount: '0.1' }, 'invalid_requirement'],
    ];
    for (const [patch, code] of cases) {
      await expect(w.pay(option(patch))).rejects.toMatchObject({ code });
    }
    expect(await usdcOf(key.address)).toBe(before);
  });

  it('fails with payment_failed when the payer cannot cover the payment', async () => {
    const poor = newSolanaKey();
    await sb.faucet(poor.address, 1_000n);
    const w = solanaWallet({ secretKey: poor.secretKey, rpcUrl: sb.url });
    const err = await w.pay(option()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SolanaPaymentError);
    expect((err as SolanaPaymentError).code).toBe('payment_failed');
    expect(await usdcOf(poor.address)).toBe(1_000n);
  });

  it('stops before paying when the signal is already aborted', async () => {
    const w = solanaWallet({ secretKey: key.secretKey, rpcUrl: sb.url });
    const before = await usdcOf(key.address);
    await expect(w.pay(option(), { signal: AbortSignal.abort() })).rejects.toThrow();
    expect(await usdcOf(key.address)).toBe(before);
  });

  it('rejects a keypair whose halves do not match when it first signs', async () => {
    const mismatched = new Uint8Array([
      ...newSolanaKey().secretKey.subarray(0, 32),
      ...key.secretKey.subarray(32),
    ]);
    const w = solanaWallet({ secretKey: mismatched, rpcUrl: sb.url });
    await expect(w.pay(option())).rejects.toThrow(/does not match/i);
    expect(() => solanaWallet({ secretKey: new Uint8Array(32), rpcUrl: sb.url })).toThrow(/64-byte/);
  });
});
