/**
 * The production Sui source against the sandbox chain's fault switches: every
 * infrastructure failure surfaces as ChainUnavailableError, never as a verdict.
 */
import type { SuiSandbox } from '@tollgate/sandbox';
import { startSuiSandbox } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainUnavailableError } from '../../src/chains/chain.ts';
import { createSuiSource } from '../../src/chains/sui/index.ts';
import { makeSuiHarness } from './sui-harness.ts';

let sui: SuiSandbox;
beforeAll(async () => {
  sui = await startSuiSandbox({ slowMs: 1_000 });
});
afterAll(async () => {
  await sui?.close();
});

const unknownDigest = '11111111111111111111111111111112';

describe('Sui source faults', () => {
  it.each(['rpc_down', 'error_500'] as const)('throws ChainUnavailableError under %s', async (fault) => {
    const source = createSuiSource({ rpcUrl: sui.url, network: 'localnet' });
    sui.setFault(fault);
    try {
      await expect(source.fetch(unknownDigest)).rejects.toBeInstanceOf(ChainUnavailableError);
    } finally {
      sui.setFault('none');
    }
  });

  it('throws ChainUnavailableError when the node is slower than the timeout', async () => {
    const source = createSuiSource({ rpcUrl: sui.url, network: 'localnet', timeoutMs: 100 });
    sui.setFault('slow');
    try {
      await expect(source.fetch(unknownDigest)).rejects.toBeInstanceOf(ChainUnavailableError);
    } finally {
      sui.setFault('none');
    }
  });

  it('throws ChainUnavailableError when nothing listens at the URL', async () => {
    const closed = await startSuiSandbox();
    await closed.close();
    const source = createSuiSource({ rpcUrl: closed.url, network: 'localnet', timeoutMs: 2_000 });
    await expect(source.fetch(unknownDigest)).rejects.toBeInstanceOf(ChainUnavailableError);
  });

  it('answers null for an unknown digest and for a malformed one', async () => {
    const source = createSuiSource({ rpcUrl: sui.url, network: 'localnet' });
    expect(await source.fetch(unknownDigest)).toBeNull();
    expect(await source.fetch('0xnot-a-digest')).toBeNull();
  });

  it('refuses to verify on mainnet against a node of another chain', async () => {
    const source = createSuiSource({ rpcUrl: sui.url, network: 'mainnet' });
    await expect(source.fetch(unknownDigest)).rejects.toThrow(/is on chain/);
  });

  it('answers null while a lagging node does not know a transaction yet', async () => {
    const h = await makeSuiHarness(sui);
    const digest = await h.send({ transfers: [{ to: await h.newRecipient(), amount: 1n }], memos: [] });
    const source = createSuiSource({ rpcUrl: sui.url, network: 'localnet' });
    sui.setFault('not_found');
    try {
      expect(await source.fetch(digest)).toBeNull();
    } finally {
      sui.setFault('none');
    }
    expect(await source.fetch(digest)).toMatchObject({ id: digest, final: true });
  });
});
