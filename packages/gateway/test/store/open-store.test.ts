import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, sqliteLocation } from '../../src/store/open-store.ts';

describe('openStore', () => {
  it('rejects an unknown scheme without echoing the URL (it may hold a password)', async () => {
    const err = await openStore('mysql://root:hunter2@db.example/app').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('"mysql:"');
    expect((err as Error).message).toContain('sqlite:<path>');
    expect((err as Error).message).not.toContain('hunter2');
    await expect(openStore('')).rejects.toThrow(/unsupported DATABASE_URL/);
    await expect(openStore('./tollgate.db')).rejects.toThrow(/unsupported DATABASE_URL/);
  });

  it('rejects sqlite: without a path and a schema option for SQLite', async () => {
    await expect(openStore('sqlite:')).rejects.toThrow(/needs a file path/);
    await expect(openStore('sqlite::memory:', { schema: 'x' })).rejects.toThrow(/PostgreSQL only/);
  });

  it('rejects an unsafe PostgreSQL schema name before connecting', async () => {
    await expect(openStore('postgres://127.0.0.1:1/none', { schema: 'x; drop table y' })).rejects.toThrow(
      /invalid PostgreSQL schema name/,
    );
  });

  it('reads sqlite locations', () => {
    expect(sqliteLocation('sqlite::memory:')).toBe(':memory:');
    expect(sqliteLocation('sqlite:./data/tollgate.db')).toBe('./data/tollgate.db');
    expect(sqliteLocation('sqlite:/var/lib/t.db')).toBe('/var/lib/t.db');
    expect(sqliteLocation('sqlite:///var/lib/t.db')).toBe('/var/lib/t.db');
  });

  it('writes durably through a symlinked SQLite path (SQLite keeps its WAL beside the real file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-symlink-'));
    try {
      mkdirSync(join(dir, 'real'));
      mkdirSync(join(dir, 'link'));
      writeFileSync(join(dir, 'real', 't.db'), '', { mode: 0o600 });
      symlinkSync(join(dir, 'real', 't.db'), join(dir, 'link', 't.db'));
      const s = await openStore(`sqlite:${join(dir, 'link', 't.db')}`);
      try {
        const p = await s.projects.create({
          slug: 'linked',
          name: 'Linked',
          description: '',
          category: 'test',
          owner: { chain: 'solana', address: 'So11111111111111111111111111111111111111112' },
        });
        expect(await s.projects.bySlug('linked')).toEqual(p);
      } finally {
        await s.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens an in-memory SQLite store with the sqlite kind', async () => {
    const s = await openStore('sqlite::memory:');
    expect(s.kind).toBe('sqlite');
    await s.close();
    await s.close(); // closing twice is harmless
  });
});
