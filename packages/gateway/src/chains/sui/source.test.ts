import { readFileSync } from 'node:fs';
import { TransactionError } from '@mysten/sui/client';
import { RpcError } from '@mysten/sui/grpc';
import { fromBase64 } from '@mysten/sui/utils';
import { describe, expect, it, vi } from 'vitest';
import { ChainUnavailableError } from '../chain.ts';
import type { SuiReadClient } from './source.ts';
import { createSuiSource, SUI_MAINNET_CHAIN_ID } from './source.ts';

const raw = JSON.parse(readFileSync(new URL('./fixtures/usdc-two-recipients.json', import.meta.url), 'utf8'));
const DIGEST: string = raw.Transaction.digest;
const answer = () => ({
  $kind: 'Transaction',
  Transaction: { ...raw.Transaction, bcs: fromBase64(raw.Transaction.bcs) },
});

function fakeClient(getTransaction: () => Promise<unknown>, chainId = SUI_MAINNET_CHAIN_ID) {
  const client = {
    core: {
      getTransaction: vi.fn(getTransaction),
      getChainIdentifier: vi.fn(async () => ({ chainIdentifier: chainId })),
    },
  };
  return client satisfies SuiReadClient;
}

const source = (client: SuiReadClient, network = 'mainnet') =>
  createSuiSource({ rpcUrl: 'http://127.0.0.1:9', network, client, timeoutMs: 1000 });

describe('createSuiSource', () => {
  it('returns the normalised transaction', async () => {
    const tx = await source(fakeClient(async () => answer())).fetch(DIGEST);
    expect(tx).toMatchObject({ id: DIGEST, final: true, success: true });
  });

  it.each([
    ['gRPC NOT_FOUND', () => new RpcError('Transaction not found', 'NOT_FOUND')],
    ['TransactionError notFound', () => new TransactionError('notFound', DIGEST)],
  ])('answers null for %s', async (_name, error) => {
    const tx = await source(
      fakeClient(async () => {
        throw error();
      }),
    ).fetch(DIGEST);
    expect(tx).toBeNull();
  });

  it('answers null for a malformed digest without asking the node', async () => {
    const client = fakeClient(async () => answer());
    for (const bad of ['', 'not-base58!', '0x1234', '1'.repeat(60)]) {
      expect(await source(client).fetch(bad)).toBeNull();
    }
    expect(client.core.getTransaction).not.toHaveBeenCalled();
  });

  it.each([
    ['UNAVAILABLE', () => new RpcError('down', 'UNAVAILABLE')],
    ['INTERNAL (connection refused)', () => new RpcError('fetch failed', 'INTERNAL')],
    ['DEADLINE_EXCEEDED', () => new RpcError('timeout', 'DEADLINE_EXCEEDED')],
    ['a plain Error', () => new Error('socket hang up')],
  ])('throws ChainUnavailableError on %s', async (_name, error) => {
    const p = source(
      fakeClient(async () => {
        throw error();
      }),
    ).fetch(DIGEST);
    await expect(p).rejects.toBeInstanceOf(ChainUnavailableError);
  });

  it('throws ChainUnavailableError for a malformed answer', async () => {
    const p = source(
      fakeClient(async () => ({ $kind: 'Transaction', Transaction: { digest: DIGEST } })),
    ).fetch(DIGEST);
    await expect(p).rejects.toBeInstanceOf(ChainUnavailableError);
  });

  it('throws ChainUnavailableError when a mainnet gateway is pointed at another chain', async () => {
    const client = fakeClient(async () => answer(), 'BTHesXmB714EeQVpeYLJe2n1P5pEn8hEdDBgWdU2uRRn');
    await expect(source(client).fetch(DIGEST)).rejects.toThrow(
      /not 4btiuiMPvEENsttpZC7CZ53DruC3MAgfznDbASZ7DR6S/,
    );
    expect(client.core.getTransaction).not.toHaveBeenCalled();
  });

  it('does not check the chain id off mainnet unless asked to', async () => {
    const client = fakeClient(async () => answer(), 'some-local-chain');
    expect(await source(client, 'localnet').fetch(DIGEST)).not.toBeNull();
    expect(client.core.getChainIdentifier).not.toHaveBeenCalled();
  });
});
