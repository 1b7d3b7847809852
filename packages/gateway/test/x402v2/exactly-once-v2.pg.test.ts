/**
 * Exactly-once for x402 v2 across processes (DESIGN §4.12): two gateway processes with
 * production config share one PostgreSQL schema and one Solana sponsor. A stock x402
 * client (@x402/fetch's x402HTTPClient + @x402/svm, unmodified, mainnet defaults) makes
 * ONE payment payload; ten concurrent requests carrying that same `PAYMENT-SIGNATURE`,
 * spread over both processes, make exactly one on-chain transfer and one upstream call.
 * Every answer is the paid 200 (the first, or a stored replay) or 409 payment_in_progress,
 * and the same header later replays.
 */
import { randomBytes } from 'node:crypto';
import { address, createKeyPairSignerFromBytes, createSolanaRpc, getBase58Decoder } from '@solana/kit';
import {
  type AcceptOption,
  decodeSettleResponse,
  parseAmount,
  SOLANA_MAINNET_CAIP2,
  USDC_SOLANA_MINT,
} from '@tollgate/protocol';
import { newSolanaKey, newSuiKey } from '@tollgate/sandbox';
import { x402Client, x402HTTPClient } from '@x402/fetch';
import { toClientSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishProject } from '../../src/marketplace/publish.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { type Chains, startChains } from '../support/gateway-harness.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/gateway-process.ts';
import { startTestUpstream, type TestUpstream } from '../support/test-upstream.ts';

const PG = process.env['DATABASE_URL_TEST'];
const CONCURRENT = 10;

describe.skipIf(!PG)('exactly-once x402 v2 payments across gateway processes (PostgreSQL)', () => {
  const schema = `tg_v2_${randomBytes(4).toString('hex')}`;
  let chains: Chains;
  let upstream: TestUpstream;
  let store: Store;
  let gateways: GatewayProcess[] = [];
  let slug: string;
  let rpc: ReturnType<typeof createSolanaRpc>;
  const platform = { solana: newSolanaKey().address, sui: newSuiKey().address };
  const provider = newSolanaKey().address;
  const sponsor = newSolanaKey();
  const payer = newSolanaKey();

  beforeAll(async () => {
    // Production (mainnet) config: the chains present mainnet's identities.
    chains = await startChains({ as: 'mainnet' });
    rpc = createSolanaRpc(chains.solana.url);
    upstream = await startTestUpstream();
    store = await openStore(PG!, { schema });
    slug = `race-v2-${randomBytes(3).toString('hex')}`;
    await publishProject(store, {
      slug,
      name: 'race v2',
      owner: { chain: 'solana', address: provider },
      api: { name: 'up', baseUrl: upstream.url },
      endpoints: [{ method: 'GET', path: 'slow', price: '0.01', timeoutMs: 5000 }],
      rails: [{ chain: 'solana', network: 'mainnet', providerRecipient: provider }],
      x402Exact: true,
    });
    // A funded sponsor, the platform's USDC account, and a payer with USDC and no SOL.
    await chains.solana.faucet(sponsor.address, 0n, 10n * 1_000_000_000n);
    await chains.solana.faucet(platform.solana, 0n, 0n);
    await chains.solana.faucet(payer.address, parseAmount('5', 6), 0n);

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
      TOLLGATE_SOLANA_SPONSOR_KEY: getBase58Decoder().decode(sponsor.secretKey),
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

  const usdc = (owner: string) => chains.solana.usdcBalance(owner);
  const sol = async (owner: string) => (await rpc.getBalance(address(owner)).send()).value;
  const snapshot = async () => ({
    payer: await usdc(payer.address),
    payerSol: await sol(payer.address),
    platform: await usdc(platform.solana),
    provider: await usdc(provider),
    sponsorSol: await sol(sponsor.address),
  });

  it(`makes one transfer and one upstream call for ${CONCURRENT} concurrent sends of one PAYMENT-SIGNATURE`, async () => {
    upstream.delayMs = 300;
    const url = (i: number) => `${gateways[i % 2]!.url}/p/${slug}/slow`;

    // The stock client, with mainnet's defaults: no spend controls, USDC is its default asset.
    const signer = await createKeyPairSignerFromBytes(payer.secretKey);
    const client = new x402Client().register(
      'solana:*',
      new ExactSvmScheme(toClientSvmSigner(signer as never), { rpcUrl: chains.solana.url }),
    );
    const http = new x402HTTPClient(client);
    const quoted = await fetch(url(0));
    expect(quoted.status).toBe(402);
    const spec = (await quoted.json()) as { accepts: AcceptOption[] };
    const required = http.getPaymentRequiredResponse((name) => quoted.headers.get(name), spec);
    const paymentPayload = await http.createPaymentPayload(required);
    expect(paymentPayload.accepted).toMatchObject({ network: SOLANA_MAINNET_CAIP2, asset: USDC_SOLANA_MINT });
    expect(paymentPayload.accepted.extra['feePayer']).toBe(sponsor.address);
    const headers = http.encodePaymentSignatureHeader(paymentPayload);
    expect(Object.keys(headers).map((k) => k.toLowerCase())).toEqual(['payment-signature']);
    const amount = BigInt(paymentPayload.accepted.amount);
    const option = spec.accepts.find((a) => a.chain === 'solana')!;
    const providerShare = parseAmount(option.splits.find((s) => s.payTo === provider)!.amount, 6);
    expect(providerShare).toBeGreaterThan(0n);
    expect(providerShare).toBeLessThan(amount);

    const before = await snapshot();
    const results = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        fetch(url(i), { headers }).then(async (r) => ({
          gateway: i % 2,
          status: r.status,
          text: await r.text(),
          replay: r.headers.get('x-tollgate-replay'),
          receipt: r.headers.get('payment-response'),
        })),
      ),
    );
    const diagnose = () =>
      JSON.stringify(
        results.map(({ text, ...r }) => ({ ...r, text: text.slice(0, 200) })),
        null,
        1,
      );

    // One upstream call, one 200 that was not a replay; everyone else a replay or 409.
    expect(upstream.calls('/slow'), diagnose()).toHaveLength(1);
    const ok = results.filter((r) => r.status === 200);
    const busy = results.filter((r) => r.status === 409);
    expect(ok.length + busy.length, diagnose()).toBe(CONCURRENT);
    expect(
      ok.filter((r) => r.replay === null),
      diagnose(),
    ).toHaveLength(1);
    for (const r of ok.filter((x) => x.replay !== null)) expect(r.replay).toBe('true');
    for (const b of busy)
      expect((JSON.parse(b.text) as { error?: string }).error).toBe('payment_in_progress');
    const first = ok.find((r) => r.replay === null)!;
    for (const r of ok) expect(r.text).toBe(first.text);

    // One transfer on-chain: the payer paid the amount once, the platform got it once.
    const receipt = decodeSettleResponse(first.receipt);
    expect(receipt).toMatchObject({
      success: true,
      payer: payer.address,
      amount: String(amount),
      network: SOLANA_MAINNET_CAIP2,
    });
    for (const r of ok) expect(decodeSettleResponse(r.receipt).transaction).toBe(receipt.transaction);
    const status = (
      await rpc
        .getSignatureStatuses([receipt.transaction as never], { searchTransactionHistory: true })
        .send()
    ).value[0];
    expect(status?.err).toBeNull();
    const after = await snapshot();
    expect(after.payer).toBe(before.payer - amount);
    expect(after.platform).toBe(before.platform + amount);
    expect(after.provider).toBe(before.provider);
    expect(after.payerSol).toBe(0n);
    // The sponsor paid one transaction's fee (two signatures), not ten.
    expect(before.sponsorSol - after.sponsorSol).toBeGreaterThanOrEqual(10_000n);
    expect(before.sponsorSol - after.sponsorSol).toBeLessThan(20_000n);

    // One redemption, delivered, owing the provider its share once.
    const redemption = await store.redemptions.byTx('solana', 'mainnet', receipt.transaction);
    expect(redemption?.state).toBe('delivered');
    expect(await store.payables.byRedemption(redemption!.id)).toMatchObject({
      recipient: provider,
      amount: providerShare,
      state: 'pending',
    });

    // Later, on either process: the stored answer, nothing more paid or called.
    for (const i of [1, 0]) {
      const again = await fetch(url(i), { headers });
      expect(again.status).toBe(200);
      expect(again.headers.get('x-tollgate-replay')).toBe('true');
      expect(await again.text()).toBe(first.text);
    }
    expect(upstream.calls('/slow')).toHaveLength(1);
    expect(await snapshot()).toEqual(after);
  }, 60_000);
});
