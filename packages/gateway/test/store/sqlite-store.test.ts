import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { claimInput, kinds } from './contract/redemptions.ts';
import { runStoreContract } from './store-contract.ts';

const base = mkdtempSync(join(tmpdir(), 'tollgate-store-'));
let n = 0;
afterAll(() => rmSync(base, { recursive: true, force: true }));

runStoreContract('sqlite in memory', () => openStore('sqlite::memory:'));
// A nested path also checks that the parent directories are created.
runStoreContract('sqlite file', () => openStore(`sqlite:${join(base, `run-${++n}`, 'data', 'tollgate.db')}`));

describe('sqlite file shared by two stores', () => {
  it('keeps one redemption winner across two connections, and data survives reopening', async () => {
    const file = join(base, 'shared', 'tollgate.db');
    const a = await openStore(`sqlite:${file}`);
    const b = await openStore(`sqlite:${file}`);
    try {
      expect(existsSync(`${file}-wal`)).toBe(true);
      const input = claimInput();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b).redemptions.claim(input)),
      );
      expect(kinds(results)).toEqual({ claimed: 1, in_progress: 49 });
      const p = await a.projects.create({
        slug: 'shared',
        name: 'Shared',
        description: '',
        category: 'x',
        owner: { chain: 'sui', address: '0x1' },
      });
      expect(await b.projects.bySlug('shared')).toEqual(p);
    } finally {
      await a.close();
      await b.close();
    }
    const again = await openStore(`sqlite:${file}`);
    try {
      expect((await again.projects.listAll()).map((p) => p.slug)).toEqual(['shared']);
    } finally {
      await again.close();
    }
  });
});

describe('sqlite store closing', () => {
  it('refuses the paid path’s statements once close() has begun, as it refuses every other query', async () => {
    const s = await openStore(`sqlite:${join(base, `closing-${++n}`, 'tollgate.db')}`);
    const input = claimInput();
    const closing = s.close();
    await new Promise((r) => setImmediate(r));
    await expect(s.redemptions.claim(input)).rejects.toThrow(/destroyed/);
    await expect(s.redemptions.byTx(input.chain, input.network, input.txId)).rejects.toThrow(/destroyed/);
    await expect(s.redemptions.noteReplay('rdm_x')).rejects.toThrow(/destroyed/);
    await closing;
  });
});
