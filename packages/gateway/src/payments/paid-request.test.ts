import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics, type Metrics } from '../metrics.ts';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { createPaidRequest, type PaymentRef } from './paid-request.ts';

let store: Store;
let metrics: Metrics;
const logged: string[] = [];

beforeEach(async () => {
  store = await openStore('sqlite::memory:');
  metrics = createMetrics({ defaults: false });
  logged.length = 0;
});
afterEach(async () => {
  await store.close();
});

const ref = (): PaymentRef => ({
  version: 1,
  chain: 'solana',
  network: 'localnet',
  txId: 'tx-1',
  payer: 'P',
  requirementId: 'r',
  claims: {
    scheme: 'exact_split',
    subject: 's',
    nonce: 'n',
    requestHash: 'h',
    issuedAtMs: 0,
    expiresAtMs: 0,
    price: 1n,
    fee: 0n,
    options: [],
  },
  option: { chain: 'solana', network: 'localnet', assetId: 'm', memo: 'x', splits: [] },
  receipt: () => ({}),
});

describe('a paid request', () => {
  it('does not report a lost lease when a renewal in flight meets its own completion', async () => {
    const now = Date.now();
    const claimed = await store.redemptions.claim({
      chain: 'solana',
      network: 'localnet',
      txId: 'tx-1',
      nonce: 'n',
      requestHash: 'h',
      requirementId: 'r',
      payer: 'P',
      meta: {},
      projectId: null,
      endpointId: null,
      amount: 0n,
      fee: 0n,
      nowMs: now,
      leaseMs: 300,
    });
    if (claimed.kind !== 'claimed') throw new Error(claimed.kind);
    const repo = store.redemptions;
    const renew = repo.renew.bind(repo);
    // A renewal that waits in the connection pool while the answer is stored.
    const slow = {
      ...repo,
      renew: async (...a: Parameters<typeof renew>) => {
        await new Promise((r) => setTimeout(r, 40));
        return renew(...a);
      },
    };
    const paid = createPaidRequest(
      {
        redemptions: slow,
        metrics,
        now: Date.now,
        leaseMs: 300,
        paidRetryAfterSec: 1,
        log: { error: (_o, m) => void logged.push(m), warn: () => {} },
      },
      claimed.redemption,
      ref(),
    );
    await new Promise((r) => setTimeout(r, 115));
    await paid.deliver({ status: 200, headers: {}, body: new Uint8Array() });
    await new Promise((r) => setTimeout(r, 80));
    expect((await repo.byTx('solana', 'localnet', 'tx-1'))?.state).toBe('delivered');
    expect(logged).toEqual([]);
    const m = await metrics.settlement.get();
    expect(m.values.find((v) => v.labels.step === 'renew')).toBeUndefined();
  });
});
