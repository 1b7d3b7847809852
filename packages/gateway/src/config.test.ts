import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBase58Decoder } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, inspectConfig, loadConfig } from './config.ts';
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

  it('reports every bad variable at once, each with what was expected', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-config-'));
    const notADir = join(dir, 'file');
    writeFileSync(notADir, 'x');
    let error: ConfigError | undefined;
    try {
      loadConfig(
        {
          PORT: 'abc',
          HOST: 'bad host!',
          DATABASE_URL: 'mysql://root:hunter2@db/x',
          PUBLIC_BASE_URL: 'ftp://pay.example.com',
          PLATFORM_FEE_MIN: '0.0000001',
          TOLLGATE_SECRET: 'too-short-secret',
          TOLLGATE_SOLANA_SPONSOR_KEY: join(dir, 'missing-sponsor.json'),
          TOLLGATE_MODELS_FILE: join(dir, 'missing-models.json'),
          TOLLGATE_DATA_DIR: join(notADir, 'data'),
        },
        [],
      );
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const names = error!.problems.map((p) => p.split(':')[0]);
    expect(names.sort()).toEqual(
      [
        'PORT',
        'HOST',
        'DATABASE_URL',
        'PUBLIC_BASE_URL',
        'PLATFORM_FEE_MIN',
        'TOLLGATE_SECRET',
        'TOLLGATE_SOLANA_SPONSOR_KEY',
        'TOLLGATE_MODELS_FILE',
        'TOLLGATE_DATA_DIR',
      ].sort(),
    );
    const text = error!.message;
    expect(text).toContain('PORT: expected a port number from 0 to 65535, got "abc"');
    expect(text).toContain('HOST: expected an IP address or a host name');
    expect(text).toContain('DATABASE_URL: expected sqlite:<path>, sqlite::memory: or postgres://');
    expect(text).toContain('(got scheme "mysql:")');
    expect(text).toMatch(/TOLLGATE_DATA_DIR: expected .*is a file/);
    // Secrets and passwords are never echoed.
    expect(text).not.toContain('too-short-secret');
    expect(text).not.toContain('hunter2');
  });

  it('also lists the settings that are required outside sandbox mode beside bad values', () => {
    const e = (() => {
      try {
        loadConfig(
          { TOLLGATE_NETWORK: 'mainnet', PORT: '-1', SOLANA_RPC_URL: 'https://rpc.example.com' },
          [],
        );
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(e.problems.map((p) => p.split(':')[0])).toEqual([
      'PORT',
      'TOLLGATE_SECRET',
      'DATABASE_URL',
      'PUBLIC_BASE_URL',
      'PLATFORM_SOLANA_ADDRESS',
    ]);
  });

  it.each([
    ['127.0.0.1', true],
    ['0.0.0.0', true],
    ['::', true],
    ['::1', true],
    ['localhost', true],
    ['gw-1.internal.example.com', true],
    ['bad host!', false],
    ['under_score', false],
    ['-leading.example.com', false],
    ['http://127.0.0.1', false],
    ['[::1]', false],
  ])('HOST=%s is valid: %s', (host, ok) => {
    if (ok) expect(loadConfig({ HOST: host }, []).host).toBe(host);
    else expect(() => loadConfig({ HOST: host }, [])).toThrow(/HOST: expected an IP address or a host name/);
  });

  it.each([
    ['sqlite::memory:', true],
    ['postgres://tollgate:pw@db.internal:5432/tollgate', true],
    ['postgresql://db/tollgate?sslmode=require', true],
    ['postgres:///tollgate?host=/var/run/postgresql', true],
    ['sqlite:', false],
    ['postgres://', false],
    ['postgres://user:p@ss#word@host/db', false],
    ['mysql://db/x', false],
    ['tollgate.db', false],
  ])('DATABASE_URL=%s is valid: %s', (url, ok) => {
    if (ok) expect(loadConfig({ DATABASE_URL: url }, []).databaseUrl).toBe(url);
    else expect(() => loadConfig({ DATABASE_URL: url }, [])).toThrow(/DATABASE_URL: expected/);
  });

  it('checks that a SQLite file can be created, and is a SQLite database when it exists', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-config-'));
    expect(loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'new/sub/t.db')}` }, []).databaseUrl).toContain(
      dir,
    );
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not a database');
    expect(() => loadConfig({ DATABASE_URL: `sqlite:${text}` }, [])).toThrow(/is something else/);
    expect(() => loadConfig({ DATABASE_URL: `sqlite:${join(text, 't.db')}` }, [])).toThrow(/is a file/);
    expect(() => loadConfig({ DATABASE_URL: `sqlite:${dir}` }, [])).toThrow(/is a directory/);
    // Root ignores permission bits; a read-only file system does not.
    expect(() => loadConfig({ DATABASE_URL: 'sqlite:/proc/1/tollgate/t.db' }, [])).toThrow(
      /not writable|read-only/,
    );
  });

  it('checks the sponsor key: a readable keypair file, or the keypair itself', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-config-'));
    const good = join(dir, 'sponsor.json');
    writeFileSync(good, JSON.stringify(Array.from({ length: 64 }, (_, i) => i)));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '[1,2,3]');
    expect(loadConfig({ TOLLGATE_SOLANA_SPONSOR_KEY: good }, []).solanaSponsorKey).toBe(good);
    // base58 of 64 bytes
    const b58 = getBase58Decoder().decode(Uint8Array.from({ length: 64 }, (_, i) => 255 - i));
    expect(loadConfig({ TOLLGATE_SOLANA_SPONSOR_KEY: b58 }, []).solanaSponsorKey).toBe(b58);
    expect(() => loadConfig({ TOLLGATE_SOLANA_SPONSOR_KEY: bad }, [])).toThrow(
      /TOLLGATE_SOLANA_SPONSOR_KEY: expected a Solana keypair .*bad\.json is not one/,
    );
    expect(() => loadConfig({ TOLLGATE_SOLANA_SPONSOR_KEY: join(dir, 'nope.json') }, [])).toThrow(
      /TOLLGATE_SOLANA_SPONSOR_KEY: expected a readable key file or a key, but there is no file/,
    );
    const short = getBase58Decoder().decode(Uint8Array.from({ length: 32 }, (_, i) => i + 1));
    expect(() => loadConfig({ TOLLGATE_SOLANA_SPONSOR_KEY: short }, [])).toThrow(/Solana keypair/);
    expect(() => loadConfig({ TOLLGATE_SOLANA_SPONSOR_KEY: 'not-a-key' }, [])).toThrow(
      /TOLLGATE_SOLANA_SPONSOR_KEY: expected a Solana keypair/,
    );
  });

  it('refuses a --config file that names unknown variables, with the other problems', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-config-'));
    const file = join(dir, 'tollgate.json');
    writeFileSync(file, JSON.stringify({ PROT: 9000 }));
    expect(() => loadConfig({ PORT: 'x' }, ['--config', file])).toThrow(
      /--config: .* names unknown variables: PROT[\s\S]*PORT: expected/,
    );
  });

  it('shows the effective settings with their source, secrets and URL credentials redacted', () => {
    const { settings } = inspectConfig(
      {
        TOLLGATE_SECRET: 's'.repeat(40),
        PORT: '9000',
        DATABASE_URL: 'postgres://tg:hunter2@db.internal:5432/tollgate',
        SOLANA_RPC_URL: 'https://rpc.example.com/v2/abcdefghijklmnopqrstuvwxyz0123?api-key=k3y',
      },
      [],
    );
    const by = Object.fromEntries(settings.map((s) => [s.name, s]));
    expect(settings.map((s) => s.name)).toEqual([...CONFIG_VARIABLES]);
    expect(by['PORT']).toEqual({ name: 'PORT', value: '9000', source: 'env' });
    expect(by['HOST']).toEqual({ name: 'HOST', value: '127.0.0.1', source: 'default' });
    expect(by['TOLLGATE_SECRET']?.value).toBe('[redacted]');
    expect(by['DATABASE_URL']?.value).toBe('postgres://***@db.internal:5432/tollgate');
    expect(by['SOLANA_RPC_URL']?.value).toBe('https://rpc.example.com/v2/***?api-key=***');
    expect(JSON.stringify(settings)).not.toMatch(/hunter2|k3y|ssssssss|abcdefghijklmnop/);
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
