/**
 * A discovery item's `accepts` are templates of what a real 402 offers: with fake v2
 * schemes given to assembleDeps, a real `PAYMENT-REQUIRED` for the same route has entries
 * equal to the template but for the per-request parts (amount for a body-priced route,
 * `extra.memo`, `extra.paymentRequirementId`).
 */
import { randomBytes } from 'node:crypto';
import { decodePaymentRequired, type V2Requirements } from '@tollgate/protocol';
import { newSolanaKey, newSuiKey } from '@tollgate/sandbox';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleDeps, buildApp } from '../../src/app.ts';
import type { ChainId, ChainVerifier } from '../../src/chains/chain.ts';
import type { ExactV2Scheme } from '../../src/chains/exact-v2.ts';
import { loadConfig, withConfig } from '../../src/config.ts';
import type { Deps } from '../../src/deps.ts';
import type { DiscoveryItem } from '../../src/marketplace/discovery.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';

const FEE_PAYER = newSolanaKey().address;
const CAIP2: Record<ChainId, string> = {
  solana: 'solana:Sandbox1111111111111111111111111',
  sui: 'sui:localnet',
};

function fakeScheme(chain: ChainId, network: string): ExactV2Scheme {
  return {
    chain,
    network,
    caip2: CAIP2[chain],
    extra: (memo) => (chain === 'solana' ? { feePayer: FEE_PAYER, memo } : { memo }),
    check: async () => ({ ok: false, reason: 'unused', message: 'unused' }),
    settle: async () => ({ ok: false, reason: 'unused', message: 'unused' }),
  };
}

let app: FastifyInstance;
let deps: Deps;
let store: Store;

beforeAll(async () => {
  const config = withConfig(
    loadConfig(
      { TOLLGATE_NETWORK: 'sandbox', TOLLGATE_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'silent' },
      [],
    ),
    {
      databaseUrl: 'sqlite::memory:',
      platformSolanaAddress: newSolanaKey().address,
      platformSuiAddress: newSuiKey().address,
    },
  );
  store = await openStore(config.databaseUrl);
  // Quoting reads only the verifiers' network; nothing here is paid.
  const verifiers = {
    solana: { network: config.chainNetwork } as ChainVerifier,
    sui: { network: config.chainNetwork } as ChainVerifier,
  };
  const v2Schemes = {
    solana: fakeScheme('solana', config.chainNetwork),
    sui: fakeScheme('sui', config.chainNetwork),
  };
  const v2PayTo = (chain: ChainId) =>
    chain === 'sui' ? config.platformSuiAddress : config.platformSolanaAddress;
  // assembleDeps gives the same schemes and payee to the settlement (the 402) and to discovery.
  deps = assembleDeps(config, store, verifiers, { v2Schemes, v2PayTo });
  app = await buildApp(deps, { logger: false });
});
afterAll(async () => {
  await app?.close();
  await deps?.forwarder.close();
  await deps?.inference.close();
  await store?.close();
});

const strip = ({ amount: _a, extra, ...rest }: V2Requirements) => {
  const { memo: _m, paymentRequirementId: _t, ...kept } = extra;
  return { ...rest, extra: kept };
};

describe('discovery accepts vs a real PAYMENT-REQUIRED', () => {
  it('chat completions: the same entries but for the amount and the per-request extra', async () => {
    const list = await app.inject({ url: '/discovery/resources?provider=tollgate' });
    const items = list.json().items as DiscoveryItem[];
    const chat = items.find((i) => i.metadata.path === '/v1/chat/completions')!;
    expect(chat.accepts.length).toBe(2);

    const res = await app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ model: 'tollgate-dev-chat', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.statusCode).toBe(402);
    const header = res.headers['payment-required'];
    expect(typeof header).toBe('string');
    const required = decodePaymentRequired(header);
    expect(required.resource.url).toBe(chat.resource);
    expect(required.accepts.map(strip)).toEqual(chat.accepts.map(strip));
    // The same bazaar extension (the reference model is the one asked for here).
    expect(required.extensions?.['bazaar']).toEqual(chat.extensions!.bazaar);
    // The real 402 has the per-request parts discovery leaves out.
    for (const entry of required.accepts) {
      expect(entry.extra).toHaveProperty('memo');
      expect(entry.extra).toHaveProperty('paymentRequirementId');
    }
    for (const entry of chat.accepts) {
      expect(entry.extra).not.toHaveProperty('memo');
      expect(entry.extra).not.toHaveProperty('paymentRequirementId');
    }
  });
});
