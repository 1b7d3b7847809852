/**
 * /readyz asks the database and each configured chain node (the sandbox chains, behind
 * counting proxies), answers 503 when one is down, and keeps its answer a few seconds:
 * polling it cannot hammer the nodes.
 */

import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { type SolanaSandbox, type SuiSandbox, startSolanaSandbox, startSuiSandbox } from '@tollgate/sandbox';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { loadConfig, withConfig } from '../../src/config.ts';
import { chainChecks } from '../../src/health/chain-probes.ts';
import { createReadiness, READINESS_TTL_MS } from '../../src/health/readiness.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { type RpcProxy, startRpcProxy } from '../chains/rpc-proxy.ts';

let solana: SolanaSandbox;
let sui: SuiSandbox;
let solanaProxy: RpcProxy;
let suiProxy: RpcProxy;
let store: Store;
let app: FastifyInstance;
let clock = 1_000_000;
let databaseDown = false;

beforeAll(async () => {
  [solana, sui] = await Promise.all([startSolanaSandbox(), startSuiSandbox({ slowMs: 4000 })]);
  [solanaProxy, suiProxy] = await Promise.all([startRpcProxy(solana.url), startRpcProxy(sui.url)]);
  const config = withConfig(
    loadConfig({ TOLLGATE_SECRET: 'x'.repeat(40), LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:' }, []),
    { solanaRpcUrl: solanaProxy.url, suiRpcUrl: suiProxy.url },
  );
  store = await openStore(config.databaseUrl);
  const flaky: Store = {
    ...store,
    ping: () => (databaseDown ? Promise.reject(new Error('database is gone')) : store.ping()),
  };
  app = await buildApp(assembleDeps(config, flaky, {}, { now: () => clock }), { logger: false });
});

afterAll(async () => {
  await app?.close();
  await store?.close();
  await Promise.all([solanaProxy?.close(), suiProxy?.close()]);
  await Promise.all([solana?.close(), sui?.close()]);
});

beforeEach(() => {
  solana.setFault('none');
  sui.setFault('none');
  databaseDown = false;
  clock += READINESS_TTL_MS + 1; // every test starts with a fresh round
});

const readyz = async () => {
  const res = await app.inject('/readyz');
  return { status: res.statusCode, body: res.json(), cache: res.headers['cache-control'] };
};

describe('/readyz', () => {
  it('reports the database and each configured chain', async () => {
    const r = await readyz();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ready', checks: { database: 'ok', solana: 'ok', sui: 'ok' } });
    expect(r.cache).toBe('no-store');
  });

  it('is 503 naming the chain whose node is down, and ready again once it is back', async () => {
    expect((await readyz()).status).toBe(200);
    solana.setFault('rpc_down');
    clock += READINESS_TTL_MS;
    const down = await readyz();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({
      status: 'not_ready',
      checks: { database: 'ok', solana: 'down', sui: 'ok' },
      reasons: { solana: 'unhealthy' },
    });
    solana.setFault('none');
    clock += READINESS_TTL_MS;
    expect((await readyz()).status).toBe(200);
  });

  it('is 503 when the Sui node fails, and says timeout when it does not answer in time', async () => {
    sui.setFault('error_500');
    expect((await readyz()).body).toMatchObject({ checks: { sui: 'down' }, reasons: { sui: 'unhealthy' } });
    sui.setFault('slow');
    clock += READINESS_TTL_MS;
    const started = Date.now();
    const r = await readyz();
    expect(Date.now() - started).toBeLessThan(3500); // the 2 s timeout, not the node's 4 s
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ checks: { solana: 'ok', sui: 'down' }, reasons: { sui: 'timeout' } });
  });

  it('is 503 when the database does not answer', async () => {
    databaseDown = true;
    const r = await readyz();
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ checks: { database: 'down', solana: 'ok', sui: 'ok' } });
  });

  it('asks each node at most once per few seconds, however often and however many poll it', async () => {
    const before = { solana: solanaProxy.calls, sui: suiProxy.calls };
    await Promise.all(Array.from({ length: 20 }, () => readyz()));
    for (let i = 0; i < 20; i++) await readyz();
    expect(solanaProxy.calls - before.solana).toBe(1);
    expect(suiProxy.calls - before.sui).toBe(1);

    // A down answer is kept too: a failing node is not asked again for every probe.
    solana.setFault('rpc_down');
    expect((await readyz()).status).toBe(200); // still the cached round
    clock += READINESS_TTL_MS;
    for (let i = 0; i < 10; i++) expect((await readyz()).status).toBe(503);
    expect(solanaProxy.calls - before.solana).toBe(2);
  });

  it('says unreachable for a node nobody listens on', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const url = `http://127.0.0.1:${port}`;
    const readiness = createReadiness(
      chainChecks({ solanaRpcUrl: url, suiRpcUrl: url, chainNetwork: 'localnet' }),
      { now: Date.now },
    );
    expect(await readiness.report()).toEqual({
      ready: false,
      checks: { solana: 'down', sui: 'down' },
      reasons: { solana: 'unreachable', sui: 'unreachable' },
    });
  });
});
