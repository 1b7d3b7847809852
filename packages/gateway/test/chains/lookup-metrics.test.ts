/**
 * The production wiring: the verifiers createVerifiers builds count every chain lookup
 * by outcome in tollgate_chain_lookups_total, on the app's metrics registry.
 */

import { toBase58 } from '@mysten/sui/utils';
import type { SolanaSandbox, SuiSandbox } from '@tollgate/sandbox';
import { startSolanaSandbox, startSuiSandbox } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifiers } from '../../src/app.ts';
import type { ChainId } from '../../src/chains/chain.ts';
import { loadConfig, withConfig } from '../../src/config.ts';
import { createMetrics } from '../../src/metrics.ts';

let solana: SolanaSandbox;
let sui: SuiSandbox;
beforeAll(async () => {
  [solana, sui] = await Promise.all([startSolanaSandbox(), startSuiSandbox()]);
});
afterAll(async () => {
  await Promise.all([solana?.close(), sui?.close()]);
});

/** An id in the chain's format (64-byte signature, 32-byte digest) that no chain has. */
const forged = (chain: ChainId) =>
  toBase58(crypto.getRandomValues(new Uint8Array(chain === 'solana' ? 64 : 32)));

describe('tollgate_chain_lookups_total', () => {
  it('counts each chain lookup by outcome', async () => {
    const base = loadConfig(
      { TOLLGATE_NETWORK: 'sandbox', TOLLGATE_SECRET: 'x'.repeat(64), LOG_LEVEL: 'silent' },
      [],
    );
    const config = withConfig(base, { solanaRpcUrl: solana.url, suiRpcUrl: sui.url });
    const metrics = createMetrics({ defaults: false });
    const verifiers = await createVerifiers(config, metrics);
    for (const chain of ['solana', 'sui'] as const) {
      const v = verifiers[chain]!;
      const input = (txHashOrDigest: string) => ({
        option: { chain, network: v.network, asset: 'usdc', memo: 'm', splits: [] },
        issuedAtMs: 0,
        expiresAtMs: 0,
        skewMs: 0,
        payer: 'p',
        txHashOrDigest,
      });
      const id = forged(chain);
      for (const txHashOrDigest of [id, id, 'not-an-id']) {
        expect(await v.verify(input(txHashOrDigest))).toEqual({ status: 'pending', reason: 'not_found' });
      }
    }
    const counted = (await metrics.chainLookups.get()).values.map((s) => [
      s.labels['chain'],
      s.labels['outcome'],
      s.value,
    ]);
    expect(counted).toEqual(
      expect.arrayContaining([
        ['solana', 'rpc', 1],
        ['solana', 'negative_cache_hit', 1],
        ['solana', 'malformed', 1],
        ['sui', 'rpc', 1],
        ['sui', 'negative_cache_hit', 1],
        ['sui', 'malformed', 1],
      ]),
    );
    expect(await metrics.registry.metrics()).toContain(
      'tollgate_chain_lookups_total{chain="sui",outcome="negative_cache_hit"} 1',
    );
  });
});
