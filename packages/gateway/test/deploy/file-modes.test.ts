/**
 * What the gateway writes to disk is its own: the SQLite database and its -wal/-shm
 * files, the sandbox secret, operator token and wallet keys are created 0600 and the
 * directories it creates 0700, whatever the process umask is; a database or secret
 * left readable by an older version is tightened when opened.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startSandboxMode } from '../../src/sandbox-mode.ts';
import { openStore } from '../../src/store/open-store.ts';

const mode = (path: string) => statSync(path).mode & 0o777;
const octal = (path: string) => `${path}: 0${mode(path).toString(8)}`;

let root: string;
let umask: number;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'tollgate-modes-'));
  // The most permissive umask: every mode below comes from the code, not the environment.
  umask = process.umask(0);
});
afterAll(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

describe('SQLite files', () => {
  const stores: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it('creates the database, its -wal and -shm 0600 and its new directories 0700', async () => {
    const dir = join(root, 'new', 'nested');
    const db = join(dir, 'tollgate.db');
    const store = await openStore(`sqlite:${db}`);
    stores.push(store);
    await store.auth.putChallenge({
      nonce: 'n',
      chain: 'sui',
      address: '0x1',
      message: 'm',
      issuedAtMs: 1,
      expiresAtMs: 2,
    });
    for (const f of [db, `${db}-wal`, `${db}-shm`]) {
      expect(existsSync(f), f).toBe(true);
      expect(octal(f)).toBe(`${f}: 0600`);
    }
    expect(octal(dir)).toBe(`${dir}: 0700`);
    expect(octal(join(root, 'new'))).toBe(`${join(root, 'new')}: 0700`);
  });

  it('tightens a database file an older version left readable to others', async () => {
    const dir = join(root, 'old');
    mkdirSync(dir, { mode: 0o755 });
    const db = join(dir, 'tollgate.db');
    const first = await openStore(`sqlite:${db}`);
    await first.close();
    chmodSync(db, 0o644);
    for (const f of [`${db}-wal`, `${db}-shm`]) if (existsSync(f)) chmodSync(f, 0o644);
    const store = await openStore(`sqlite:${db}`);
    stores.push(store);
    await store.auth.pruneExpired(Date.now());
    for (const f of [db, `${db}-wal`, `${db}-shm`]) if (existsSync(f)) expect(octal(f)).toBe(`${f}: 0600`);
    // A directory the operator made is the operator's business.
    expect(octal(dir)).toBe(`${dir}: 0755`);
  });
});

describe('sandbox data directory', () => {
  it('keeps the secret, operator token and wallet keys 0600 in 0700 directories', async () => {
    const dataDir = join(root, 'data');
    const sandbox = await startSandboxMode(
      loadConfig({ TOLLGATE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, []),
    );
    try {
      expect(octal(dataDir)).toBe(`${dataDir}: 0700`);
      const keys = join(dataDir, 'sandbox');
      expect(octal(keys)).toBe(`${keys}: 0700`);
      const files = [
        join(dataDir, 'secret'),
        join(dataDir, 'admin-token'),
        ...['platform-solana.json', 'platform-sui.key', 'provider-solana.json', 'provider-sui.key'].map((f) =>
          join(keys, f),
        ),
        join(keys, 'sponsor-solana.json'),
      ];
      for (const f of files) expect(octal(f)).toBe(`${f}: 0600`);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('tightens a secret and a key directory an older version left open', async () => {
    const dataDir = join(root, 'data-old');
    mkdirSync(join(dataDir, 'sandbox'), { recursive: true, mode: 0o755 });
    writeFileSync(join(dataDir, 'secret'), `${'s'.repeat(43)}\n`, { mode: 0o644 });
    writeFileSync(join(dataDir, 'admin-token'), `tgadmin_${'a'.repeat(32)}\n`, { mode: 0o644 });
    const sandbox = await startSandboxMode(
      loadConfig({ TOLLGATE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, []),
    );
    try {
      expect(sandbox.config.secret).toBe('s'.repeat(43));
      for (const f of [join(dataDir, 'secret'), join(dataDir, 'admin-token')]) {
        expect(octal(f)).toBe(`${f}: 0600`);
      }
      expect(octal(join(dataDir, 'sandbox'))).toBe(`${join(dataDir, 'sandbox')}: 0700`);
    } finally {
      await sandbox.close();
    }
  }, 60_000);
});
