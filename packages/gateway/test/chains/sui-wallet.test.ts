/**
 * The payer SDK's Sui wallet against the production Sui verifier, on the sandbox chain:
 * what the wallet puts on-chain is exactly what the gateway accepts.
 */
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import type { AcceptOption } from '@tollgate/client';
import { memoForNonce, parseAmount, suiWallet } from '@tollgate/client';
import type { SuiSandbox } from '@tollgate/sandbox';
import { startSuiSandbox } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OfferedOption } from '../../src/chains/chain.ts';
import { createSuiVerifier } from '../../src/chains/sui/index.ts';

let sui: SuiSandbox;
beforeAll(async () => {
  sui = await startSuiSandbox();
});
afterAll(async () => {
  await sui?.close();
});

const provider = Ed25519Keypair.generate().toSuiAddress();
const platform = Ed25519Keypair.generate().toSuiAddress();

function quote(): { accept: AcceptOption; offered: OfferedOption } {
  const accept: AcceptOption = {
    chain: 'sui',
    network: 'localnet',
    asset: 'USDC',
    totalAmount: '0.0125',
    decimals: 6,
    coinType: sui.coinType,
    splits: [
      { recipientType: 'provider', payTo: provider, amount: '0.01' },
      { recipientType: 'platform', payTo: platform, amount: '0.0025' },
    ],
    memo: memoForNonce(crypto.randomUUID().replaceAll('-', '')),
  };
  const offered: OfferedOption = {
    chain: 'sui',
    network: 'localnet',
    asset: accept.coinType!,
    memo: accept.memo,
    splits: accept.splits.map((s) => ({ ...s, amount: parseAmount(s.amount, 6) })),
  };
  return { accept, offered };
}

describe('Sui wallet -> Sui verifier', () => {
  it('pays a two-leg option that the production verifier accepts', async () => {
    const kp = Ed25519Keypair.generate();
    sui.faucet(kp.toSuiAddress(), 1_000_000n);
    const wallet = suiWallet({ secretKey: kp.getSecretKey(), rpcUrl: sui.url, network: 'localnet' });
    const verifier = createSuiVerifier({ rpcUrl: sui.url, network: 'localnet' });
    const { accept, offered } = quote();
    const now = Date.now();
    const input = (tx: string) => ({
      option: offered,
      issuedAtMs: now - 1_000,
      expiresAtMs: now + 300_000,
      skewMs: 30_000,
      payer: wallet.address,
      txHashOrDigest: tx,
    });

    const digest = await wallet.pay(accept);
    expect(await verifier.verify(input(digest))).toEqual({
      status: 'verified',
      timeMs: expect.any(Number),
      legs: [
        { owner: provider, delta: 10_000n },
        { owner: platform, delta: 2_500n },
      ],
    });
  });

  it('binds the payment to its quote: the digest does not verify for another memo', async () => {
    const kp = Ed25519Keypair.generate();
    sui.faucet(kp.toSuiAddress(), 1_000_000n);
    const wallet = suiWallet({ secretKey: kp, rpcUrl: sui.url, network: 'localnet' });
    const verifier = createSuiVerifier({ rpcUrl: sui.url, network: 'localnet' });
    const paid = quote();
    const digest = await wallet.pay(paid.accept);
    const other = quote();
    const now = Date.now();
    const r = await verifier.verify({
      option: other.offered,
      issuedAtMs: now - 1_000,
      expiresAtMs: now + 300_000,
      skewMs: 30_000,
      payer: wallet.address,
      txHashOrDigest: digest,
    });
    expect(r).toEqual({ status: 'rejected', reason: 'memo_missing' });
  });
});
