/**
 * The compose topology without Docker: two production gateway processes (started like
 * the image does, `node packages/gateway/bin/tollgate-gateway.mjs`) on one PostgreSQL,
 * behind nginx running deploy/nginx.conf itself (only the replicas' addresses, the
 * listen port and the file paths are rewritten for this machine). Runs where nginx and
 * DATABASE_URL_TEST are available; skipped with the reason otherwise.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { solanaWallet } from '@tollgate/client';
import { decodePaymentReceipt, parseAmount } from '@tollgate/protocol';
import { newSolanaKey, newSuiKey } from '@tollgate/sandbox';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishProject } from '../../src/marketplace/publish.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { type Chains, startChains } from '../support/gateway-harness.ts';
import { type GatewayProcess, startGatewayProcess } from '../support/gateway-process.ts';
import { freePort } from '../support/sandbox-process.ts';
import { startTestUpstream, type TestUpstream } from '../support/test-upstream.ts';
import { challenge, payFor, withPayment } from '../support/x402.ts';
import { nginxDirectives, ROOT, read } from './deploy-files.ts';

const PG = process.env['DATABASE_URL_TEST'];
const NGINX = process.env['NGINX_BIN'] ?? 'nginx';
const hasNginx = spawnSync(NGINX, ['-v'], { stdio: 'ignore' }).status === 0;
const missing = [!hasNginx && 'nginx', !PG && 'DATABASE_URL_TEST'].filter(Boolean).join(' and ');
if (missing) console.info(`load-balancer.pg.test.ts: skipped, needs ${missing}`);
const ENTRY = join(ROOT, 'packages/gateway/bin/tollgate-gateway.mjs');
const PAGE = 'https://app.example.com';
const ADMIN = `operator-${randomBytes(12).toString('hex')}`;

/** deploy/nginx.conf for this machine: replica addresses, listen port and paths rewritten. */
function localNginxConf(dir: string, replicas: string[], port: number): string {
  let conf = read('deploy/nginx.conf');
  const servers = nginxDirectives(conf)
    .filter(([name, args]) => name === 'server' && args !== '')
    .map(([, args]) => args.split(/\s+/)[0]!);
  expect(servers).toHaveLength(replicas.length);
  servers.forEach((s, i) => {
    conf = conf.replace(`server ${s} `, `server ${replicas[i]} `);
  });
  const listen = nginxDirectives(conf).find(([n]) => n === 'listen')![1];
  conf = conf.replace(`listen ${listen};`, `listen 127.0.0.1:${port};`);
  conf = conf.replace(/^pid .*;$/m, `pid ${join(dir, 'nginx.pid')};`);
  conf = conf.replace(/access_log [^;]*;/, 'access_log off;');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((t) => `  ${t}_temp_path ${join(dir, t)};`)
    .join('\n');
  return conf.replace(/^http \{$/m, `http {\n${temp}`);
}

describe.skipIf(!!missing)(
  `two production replicas on one PostgreSQL behind deploy/nginx.conf${missing ? ` (skipped: needs ${missing})` : ''}`,
  () => {
    const schema = `tg_lb_${randomBytes(4).toString('hex')}`;
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-lb-'));
    let chains: Chains;
    let upstream: TestUpstream;
    let store: Store;
    let gateways: GatewayProcess[] = [];
    let nginx: ChildProcess | undefined;
    let lb: string;
    let slug: string;
    const payer = newSolanaKey();

    beforeAll(async () => {
      chains = await startChains({ as: 'mainnet' });
      upstream = await startTestUpstream();
      store = await openStore(PG!, { schema });
      const platform = { solana: newSolanaKey().address, sui: newSuiKey().address };
      const provider = newSolanaKey().address;
      slug = `lb-${randomBytes(3).toString('hex')}`;
      await publishProject(store, {
        slug,
        name: 'balanced',
        owner: { chain: 'solana', address: provider },
        api: { name: 'up', baseUrl: upstream.url },
        endpoints: [
          { method: 'GET', path: 'paid', price: '0.01', timeoutMs: 5000 },
          { method: 'POST', path: 'paid', price: '0.01', timeoutMs: 5000 },
        ],
        rails: [{ chain: 'solana', network: 'mainnet', providerRecipient: provider }],
      });
      await chains.solana.faucet(payer.address, parseAmount('5', 6));

      const lbPort = await freePort();
      lb = `http://127.0.0.1:${lbPort}`;
      const sep = PG!.includes('?') ? '&' : '?';
      const env = {
        TOLLGATE_NETWORK: 'mainnet',
        TOLLGATE_SECRET: randomBytes(32).toString('hex'),
        TOLLGATE_ADMIN_TOKEN: ADMIN,
        DATABASE_URL: `${PG}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
        PUBLIC_BASE_URL: lb,
        SOLANA_RPC_URL: chains.solana.url,
        PLATFORM_SOLANA_ADDRESS: platform.solana,
        SUI_RPC_URL: chains.sui.url,
        PLATFORM_SUI_ADDRESS: platform.sui,
        TOLLGATE_ALLOW_PRIVATE_ORIGINS: '1',
        TOLLGATE_HEALTH_INTERVAL_MS: '0',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
      };
      gateways = await Promise.all([
        startGatewayProcess(env, { entry: ENTRY, timeoutMs: 30_000 }),
        startGatewayProcess(env, { entry: ENTRY, timeoutMs: 30_000 }),
      ]);

      // nginx's workers may run as another user when started as root: let them in.
      chmodSync(dir, 0o755);
      const conf = join(dir, 'nginx.conf');
      writeFileSync(
        conf,
        localNginxConf(
          dir,
          gateways.map((g) => g.url.replace('http://', '')),
          lbPort,
        ),
      );
      const check = spawnSync(NGINX, ['-t', '-p', dir, '-c', conf, '-e', 'stderr'], { encoding: 'utf8' });
      expect(check.status, check.stderr).toBe(0);
      nginx = spawn(NGINX, ['-p', dir, '-c', conf, '-e', 'stderr', '-g', 'daemon off;'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      for (let i = 0; i < 100; i++) {
        const ok = await fetch(`${lb}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }, 90_000);

    afterAll(async () => {
      nginx?.kill('SIGTERM');
      for (const g of gateways) g.child.kill('SIGTERM');
      await store?.close();
      await upstream?.close();
      await chains?.close();
      const client = new pg.Client({ connectionString: PG });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
      rmSync(dir, { recursive: true, force: true });
    });

    it("answers health, preflights and 402s through the balancer with the gateway's headers", async () => {
      const health = await fetch(`${lb}/healthz`);
      expect(health.status).toBe(200);
      expect(health.headers.get('x-content-type-options')).toBe('nosniff');

      const pre = await fetch(`${lb}/p/${slug}/paid`, {
        method: 'OPTIONS',
        headers: {
          origin: PAGE,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-payment',
        },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('*');
      expect(upstream.calls('/paid')).toHaveLength(0);

      const { res, requirement } = await challenge(`${lb}/p/${slug}/paid`, { headers: { origin: PAGE } });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-expose-headers')).toContain('PAYMENT-REQUIRED');
      expect(requirement.resource).toBe(`GET /p/${slug}/paid`);

      // The metrics stay on the replicas' own addresses.
      const metrics = await fetch(`${lb}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(metrics.status).toBe(404);
    });

    it('spreads requests over both replicas', async () => {
      for (let i = 0; i < 20; i++) await (await fetch(`${lb}/p/${slug}/paid`)).arrayBuffer();
      for (const g of gateways) {
        const metrics = await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } });
        const text = await metrics.text();
        const served = [
          ...text.matchAll(/^tollgate_http_requests_total\{[^}]*route="marketplace"[^}]*\} (\d+)/gm),
        ]
          .map((m) => Number(m[1]))
          .reduce((a, b) => a + b, 0);
        expect(served, g.url).toBeGreaterThan(0);
      }
    });

    it('delivers a payment once and replays it, whichever replica each send reaches', async () => {
      const wallet = solanaWallet({ secretKey: payer.secretKey, rpcUrl: chains.solana.url });
      const url = `${lb}/p/${slug}/paid?q=${randomBytes(3).toString('hex')}`;
      const { requirement } = await challenge(url);
      const { header, tx } = await payFor(wallet, requirement);
      const first = await fetch(url, withPayment({}, header));
      expect(first.status).toBe(200);
      expect(decodePaymentReceipt(first.headers.get('x-payment-response') ?? '')).toMatchObject({
        success: true,
        txHashOrDigest: tx,
      });
      const body = await first.text();
      for (let i = 0; i < 4; i++) {
        const again = await fetch(url, withPayment({}, header));
        expect(again.status).toBe(200);
        expect(again.headers.get('x-tollgate-replay')).toBe('true');
        expect(await again.text()).toBe(body);
      }
      expect(upstream.calls('/paid')).toHaveLength(1);
    });

    it("refuses an oversized body with a JSON 413 in the gateway's shape, never a 502", async () => {
      const res = await fetch(`${lb}/p/${slug}/paid`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.alloc(1536 * 1024, 1),
      });
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect((await res.json()) as { error: string }).toMatchObject({ error: 'body_too_large' });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      // At the limit it goes through to the gateway (which prices the POST).
      const atLimit = await fetch(`${lb}/p/${slug}/paid`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.alloc(1024 * 1024, 1),
      });
      expect(atLimit.status).toBe(402);
      await atLimit.arrayBuffer();
    });

    it('keeps serving when one replica dies', async () => {
      const [dead] = gateways;
      const exited = new Promise((resolve) => dead!.child.once('exit', resolve));
      dead!.child.kill('SIGKILL');
      await exited;
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${lb}/p/${slug}/paid`);
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      expect(statuses).toEqual(Array(10).fill(402));
    });
  },
);
