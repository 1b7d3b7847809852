import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from './config.ts';
import { serverTimeoutOptions } from './server-options.ts';

const MAINNET = {
  TOLLGATE_NETWORK: 'mainnet',
  TOLLGATE_SECRET: 's'.repeat(40),
  DATABASE_URL: 'postgres://db/tollgate',
  PUBLIC_BASE_URL: 'https://pay.example.com/',
  SOLANA_RPC_URL: 'https://rpc.example.com',
  PLATFORM_SOLANA_ADDRESS: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
};

describe('config', () => {
  it('runs sandbox mode with no configuration at all', () => {
    const c = loadConfig({}, []);
    expect(c).toMatchObject({
      sandbox: true,
      network: 'sandbox',
      chainNetwork: 'localnet',
      host: '127.0.0.1',
      port: 8402,
      publicBaseUrl: 'http://127.0.0.1:8402',
      allowPrivateOrigins: true,
      requirementTtlSec: 300,
      clockSkewSec: 30,
      feeBps: 100,
      feeMin: 1000n,
      rateLimitPerMin: 0,
      secret: null,
    });
    expect(c.databaseUrl).toMatch(/^sqlite:.*data\/tollgate\.db$/);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('accepts a complete production configuration', () => {
    const c = loadConfig(MAINNET, []);
    expect(c).toMatchObject({
      sandbox: false,
      chainNetwork: 'mainnet',
      allowPrivateOrigins: false,
      publicBaseUrl: 'https://pay.example.com',
    });
  });

  it('names every missing production setting at once', () => {
    try {
      loadConfig({ TOLLGATE_NETWORK: 'mainnet' }, []);
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const msg = (e as Error).message;
      for (const name of [
        'TOLLGATE_SECRET',
        'DATABASE_URL',
        'PUBLIC_BASE_URL',
        'SOLANA_RPC_URL or SUI_RPC_URL',
      ]) {
        expect(msg).toContain(name);
      }
    }
  });

  it('requires the platform recipient of each configured chain', () => {
    const { PLATFORM_SOLANA_ADDRESS: _omitted, ...rest } = MAINNET;
    expect(() => loadConfig(rest, [])).toThrow(/PLATFORM_SOLANA_ADDRESS/);
  });

  it.each([
    ['PORT', '70000'],
    ['PLATFORM_FEE_BPS', '10001'],
    ['PLATFORM_FEE_MIN', '0.0000001'],
    ['TOLLGATE_SECRET', 'short'],
    ['PLATFORM_SUI_ADDRESS', '0x123'],
    ['TOLLGATE_NETWORK', 'testnet'],
    ['TOLLGATE_ALLOW_PRIVATE_ORIGINS', 'yes'],
    ['TOLLGATE_HEADERS_TIMEOUT_MS', '0'],
    ['TOLLGATE_REQUEST_TIMEOUT_MS', '0'],
    ['TOLLGATE_KEEP_ALIVE_TIMEOUT_MS', 'soon'],
  ])('refuses %s=%s with a line naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value }, [])).toThrow(new RegExp(name));
  });

  it('reads a --config file, with the environment taking precedence', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-config-'));
    const file = join(dir, 'tollgate.json');
    writeFileSync(file, JSON.stringify({ PORT: 9000, PLATFORM_FEE_BPS: 250, LOG_LEVEL: 'warn' }));
    const c = loadConfig({ PLATFORM_FEE_BPS: '50' }, ['--config', file]);
    expect(c).toMatchObject({ port: 9000, feeBps: 50, logLevel: 'warn' });
    expect(loadConfig({}, [`--config=${file}`]).port).toBe(9000);
    expect(() => loadConfig({}, ['--config', join(dir, 'missing.json')])).toThrow(ConfigError);
  });

  it('lower-cases the platform Sui address so it compares as the chain reports it', () => {
    const c = loadConfig({ PLATFORM_SUI_ADDRESS: `0x${'AB'.repeat(32)}` }, []);
    expect(c.platformSuiAddress).toBe(`0x${'ab'.repeat(32)}`);
  });
});

describe('server deadlines for slow clients', () => {
  it('close a slow-header socket within 15 s by default, a slow body within 30 s, idle keep-alive after 72 s', () => {
    const c = loadConfig({}, []);
    expect(c).toMatchObject({
      headersTimeoutMs: 15_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 72_000,
    });
    const o = serverTimeoutOptions(c);
    expect(o).toMatchObject({ requestTimeout: 30_000, keepAliveTimeout: 72_000 });
    expect(o.http).toMatchObject({ headersTimeout: 15_000, requestTimeout: 30_000 });
    // Node's default 30 s check interval is what let such sockets live ~90 s.
    expect(o.http.connectionsCheckingInterval).toBe(1000);
  });

  it('are configurable, checked often enough for short values, and keep headers within the request', () => {
    const c = loadConfig(
      {
        TOLLGATE_HEADERS_TIMEOUT_MS: '500',
        TOLLGATE_REQUEST_TIMEOUT_MS: '900',
        TOLLGATE_KEEP_ALIVE_TIMEOUT_MS: '5000',
      },
      [],
    );
    expect(c).toMatchObject({ headersTimeoutMs: 500, requestTimeoutMs: 900, keepAliveTimeoutMs: 5000 });
    expect(serverTimeoutOptions(c).http.connectionsCheckingInterval).toBe(125);
    expect(() =>
      loadConfig({ TOLLGATE_HEADERS_TIMEOUT_MS: '20000', TOLLGATE_REQUEST_TIMEOUT_MS: '10000' }, []),
    ).toThrow(/TOLLGATE_HEADERS_TIMEOUT_MS: must not exceed TOLLGATE_REQUEST_TIMEOUT_MS/);
  });
});

describe('docs/configuration.md', () => {
  it('documents every variable the gateway reads', () => {
    const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
    const missing = CONFIG_VARIABLES.filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
