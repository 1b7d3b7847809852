import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../metrics.ts';
import { watchSponsor } from './sponsor-watch.ts';

describe('watchSponsor', () => {
  it('publishes the balance, warns once when it falls below the threshold, and says when it is back', async () => {
    let lamports = 100n;
    const lines: string[] = [];
    const metrics = createMetrics({ defaults: false });
    const watch = watchSponsor({
      sponsor: { address: 'Sponsor1111', balanceLamports: async () => lamports },
      lowLamports: 50n,
      metrics,
      log: { warn: (_o, m) => void lines.push(`warn: ${m}`), info: (_o, m) => void lines.push(`info: ${m}`) },
    });
    expect(watch.status()).toMatchObject({ state: 'unknown', lamports: null });
    await watch.refresh();
    expect(watch.status()).toMatchObject({ state: 'ok', lamports: '100', address: 'Sponsor1111' });
    lamports = 10n;
    await watch.refresh();
    await watch.refresh();
    expect(watch.status().state).toBe('low');
    lamports = 60n;
    await watch.refresh();
    expect(lines).toEqual([
      'warn: x402 v2 sponsor balance is low: fund it or v2 payments on Solana will fail',
      'info: x402 v2 sponsor balance is back above the threshold',
    ]);
    expect(await metrics.registry.metrics()).toContain(
      'tollgate_sponsor_balance_lamports{chain="solana",address="Sponsor1111"} 60',
    );
  });

  it('keeps the last known state when a read fails', async () => {
    let fail = false;
    const watch = watchSponsor({
      sponsor: {
        address: 'S',
        balanceLamports: async () => {
          if (fail) throw new Error('rpc down');
          return 5n;
        },
      },
      lowLamports: 1n,
      metrics: createMetrics({ defaults: false }),
    });
    await watch.refresh();
    fail = true;
    await watch.refresh();
    expect(watch.status()).toMatchObject({ state: 'ok', lamports: '5' });
  });
});
