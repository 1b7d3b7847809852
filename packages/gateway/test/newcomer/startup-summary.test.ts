/**
 * The startup summary of a production configuration whose URLs carry credentials and
 * API keys: every field is there, and no secret is.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, withConfig } from '../../src/config.ts';
import { safeUrl } from '../../src/config-checks.ts';
import type { Deps } from '../../src/deps.ts';
import { listenUrl, startupSummary } from '../../src/startup/summary.ts';

const SECRET = 'S3cret-'.repeat(6);
const SUI = `0x${'ab'.repeat(32)}`;
const SOLANA = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const SPONSOR = '8Q25tj6eKnG46hTkRa92iRWB8d33A4H5PiVG3AmryQGW';

describe('startup summary', () => {
  it('has every field and no secret', async () => {
    const config = loadConfig(
      {
        TOLLGATE_NETWORK: 'mainnet',
        TOLLGATE_SECRET: SECRET,
        TOLLGATE_ADMIN_TOKEN: 'admin-token-very-secret-0123456789',
        DATABASE_URL: 'postgres://tollgate:hunter2-pw@db.internal:5432/tollgate?sslmode=require',
        PUBLIC_BASE_URL: 'https://pay.example.com',
        SOLANA_RPC_URL: 'https://rpc-user:rpc-pass@solana.example.com/?api-key=k3y-in-query',
        SUI_RPC_URL: 'https://sui.example.com/ZK9sdfj2398sdfkjSDFj2398sdf/',
        PLATFORM_SOLANA_ADDRESS: SOLANA,
        PLATFORM_SUI_ADDRESS: SUI,
      },
      [],
    );
    const deps = {
      config,
      store: { projects: { listAll: async () => [{}, {}, {}] } },
      sponsor: { status: () => ({ address: SPONSOR, lamports: '1', state: 'ok', checkedAt: null }) },
      v2Schemes: { solana: {}, sui: {} },
    } as unknown as Deps;
    const summary = await startupSummary(deps, 'http://0.0.0.0:8402');
    expect(summary).toEqual({
      mode: 'production',
      listen: 'http://0.0.0.0:8402',
      publicBaseUrl: 'https://pay.example.com',
      chains: [
        { chain: 'solana', network: 'mainnet', rpc: 'https://***@solana.example.com/?api-key=***' },
        { chain: 'sui', network: 'mainnet', rpc: 'https://sui.example.com/***/' },
      ],
      database: { backend: 'postgres', location: 'tollgate@db.internal:5432/tollgate' },
      projects: 3,
      platform: { solana: SOLANA, sui: SUI },
      sponsor: SPONSOR,
      x402v2: ['solana', 'sui'],
    });
    const text = JSON.stringify(summary);
    for (const secret of [SECRET, 'admin-token', 'hunter2', 'rpc-user', 'rpc-pass', 'k3y', 'ZK9sdfj'])
      expect(text).not.toContain(secret);
  });

  it('says sandbox, SQLite with its path, no sponsor when there is none, and a null count it could not read', async () => {
    const file = join(tmpdir(), 'tg-summary', 't.db');
    const config = withConfig(loadConfig({ DATABASE_URL: `sqlite:${file}` }, []), {
      solanaRpcUrl: 'http://127.0.0.1:41000',
    });
    const deps = {
      config,
      store: { projects: { listAll: async () => Promise.reject(new Error('locked')) } },
      sponsor: null,
    } as unknown as Deps;
    expect(await startupSummary(deps, 'http://127.0.0.1:8402')).toMatchObject({
      mode: 'sandbox',
      chains: [{ chain: 'solana', network: 'localnet', rpc: 'http://127.0.0.1:41000' }],
      database: { backend: 'sqlite', location: file },
      projects: null,
      sponsor: null,
      x402v2: [],
    });
  });

  it('writes bound addresses as URLs, a wildcard as loopback for local clients', () => {
    const v4 = { address: '0.0.0.0', port: 8402, family: 'IPv4' };
    const v6 = { address: '::', port: 8402, family: 'IPv6' };
    expect(listenUrl(v4)).toBe('http://0.0.0.0:8402');
    expect(listenUrl(v4, { local: true })).toBe('http://127.0.0.1:8402');
    expect(listenUrl(v6)).toBe('http://[::]:8402');
    expect(listenUrl(v6, { local: true })).toBe('http://[::1]:8402');
  });

  it.each([
    ['https://api.mainnet-beta.solana.com', 'https://api.mainnet-beta.solana.com'],
    ['https://mainnet.helius-rpc.com/?api-key=abc', 'https://mainnet.helius-rpc.com/?api-key=***'],
    [
      'https://solana-mainnet.g.alchemy.com/v2/AbCdEfGhIjKlMnOpQrStUvWx',
      'https://solana-mainnet.g.alchemy.com/v2/***',
    ],
    ['https://user:pass@host:8443/rpc', 'https://***@host:8443/rpc'],
    ['postgres://u:p@db/x', 'postgres://***@db/x'],
    ['not a url with a p4ssword', null],
  ])('safeUrl(%s) = %s', (url, safe) => {
    expect(safeUrl(url)).toBe(safe);
  });
});
