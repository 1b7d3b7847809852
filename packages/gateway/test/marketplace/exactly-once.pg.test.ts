/**
 * Exactly-once across processes: two gateway processes share one PostgreSQL
 * database; 50 concurrent redemptions of one proof reach the upstream once, and
 * every other caller gets the replayed response or payment_in_progress.
 */
import { randomBytes } from 'node:crypto';
import { solanaWallet } from '@tollgate/client';
import { parseAmount } from '@tollgate/protocol';
import { newSolanaKey, newSuiKey } from '@tollgate/sandbox';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishProject } from '../../src/marketplace/publish.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { type Chains, startChains } from '../support/gateway-harness.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/gateway-process.ts';
import { startTestUpstream, type TestUpstream } from '../support/test-upstream.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';

const PG = process.env['DATABASE_URL_TEST'];

describe.skipIf(!PG)('exactly-once redemption across gateway processes (PostgreSQL)', () => {
  const schema = `tg_e2e_${randomBytes(4).toString('hex')}`;
  let chains: Chains;
  let upstream: TestUpstream;
  let store: Store;
  let gateways: GatewayProcess[] = [];
  let slug: string;
  const payer = newSolanaKey();

  beforeAll(async () => {
    // The gateways run with production (mainnet) config, so the chains must say they are mainnet.
    chains = await startChains({ as: 'mainnet' });
    upstream = await startTestUpstream();
    store = await openStore(PG!, { schema });
    const platform = { solana: newSolanaKey().address, sui: newSuiKey().address };
    const provider = newSolanaKey().address;
    slug = `race-${randomBytes(3).toString('hex')}`;
    await publishProject(store, {
      slug,
      name: 'race',
      owner: { chain: 'solana', address: provider },
      api: { name: 'up', baseUrl: upstream.url },
      endpoints: [{ method: 'GET', path: 'slow', price: '0.01', timeoutMs: 5000 }],
      rails: [{ chain: 'solana', network: 'mainnet', providerRecipient: provider }],
    });
    await chains.solana.faucet(payer.address, parseAmount('5', 6));

    const sep = PG!.includes('?') ? '&' : '?';
    const env = {
      TOLLGATE_NETWORK: 'mainnet',
      TOLLGATE_SECRET: randomBytes(32).toString('hex'),
      DATABASE_URL: `${PG}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
      PUBLIC_BASE_URL: 'http://127.0.0.1:1',
      SOLANA_RPC_URL: chains.solana.url,
      PLATFORM_SOLANA_ADDRESS: platform.solana,
      SUI_RPC_URL: chains.sui.url,
      PLATFORM_SUI_ADDRESS: platform.sui,
      TOLLGATE_ALLOW_PRIVATE_ORIGINS: '1',
      TOLLGATE_HEALTH_INTERVAL_MS: '0',
      PORT: '0',
      LOG_LEVEL: 'info',
    };
    gateways = await Promise.all([startGatewayProcess(env), startGatewayProcess(env)]);
  }, 60_000);

  afterAll(async () => {
    for (const g of gateways) g.child.kill('SIGTERM');
    await store?.close();
    await upstream?.close();
    await chains?.close();
    if (PG) {
      const client = new pg.Client({ connectionString: PG });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  });

  it('reaches the upstream once for 50 concurrent redemptions of one proof', async () => {
    upstream.delayMs = 300;
    const wallet = solanaWallet({ secretKey: payer.secretKey, rpcUrl: chains.solana.url });
    const { requirement } = await challenge(`${gateways[0]!.url}/p/${slug}/slow`);
    const { header } = await payFor(wallet, requirement);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        fetch(`${gateways[i % 2]!.url}/p/${slug}/slow`, withPayment({}, header)).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { error?: string },
          replay: r.headers.get('x-tollgate-replay'),
        })),
      ),
    );
    expect(upstream.calls('/slow')).toHaveLength(1);
    const ok = results.filter((r) => r.status === 200);
    const busy = results.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(50);
    expect(ok.filter((r) => r.replay === null)).toHaveLength(1);
    for (const b of busy) expect(b.body.error).toBe('payment_in_progress');
    const after = await fetch(`${gateways[1]!.url}/p/${slug}/slow`, withPayment({}, header));
    expect(after.status).toBe(200);
    expect(after.headers.get('x-tollgate-replay')).toBe('true');
    expect(upstream.calls('/slow')).toHaveLength(1);
  }, 60_000);
});
