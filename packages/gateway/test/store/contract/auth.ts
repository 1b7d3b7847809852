import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuthChallenge, Store } from '../../../src/store/store.ts';
import { UniqueViolationError } from '../../../src/store/store.ts';
import { alice, bob } from './fixtures.ts';

const T0 = 1_800_000_000_000;

function challenge(overrides: Partial<AuthChallenge> = {}): AuthChallenge {
  return {
    nonce: randomBytes(16).toString('hex'),
    chain: 'solana',
    address: 'Addr1',
    message: 'tollgate.example wants you to sign in with your Solana account:\nAddr1\n\nNonce: x',
    issuedAtMs: T0,
    expiresAtMs: T0 + 300_000,
    ...overrides,
  };
}

export function authContract(get: () => Store): void {
  describe('sign-in challenges', () => {
    it('consumes a challenge once', async () => {
      const s = get();
      const c = challenge();
      await s.auth.putChallenge(c);
      expect(await s.auth.consumeChallenge(c.nonce, T0 + 1)).toEqual(c);
      expect(await s.auth.consumeChallenge(c.nonce, T0 + 2)).toBeNull();
      expect(await s.auth.consumeChallenge('unknown-nonce', T0)).toBeNull();
    });

    it('gives a challenge to exactly one of 20 concurrent consumers', async () => {
      const s = get();
      const c = challenge();
      await s.auth.putChallenge(c);
      const got = await Promise.all(
        Array.from({ length: 20 }, () => s.auth.consumeChallenge(c.nonce, T0 + 1)),
      );
      expect(got.filter((x) => x !== null)).toEqual([c]);
    });

    it('refuses an expired challenge, and it stays unusable', async () => {
      const s = get();
      const c = challenge();
      await s.auth.putChallenge(c);
      expect(await s.auth.consumeChallenge(c.nonce, c.expiresAtMs)).toBeNull();
      expect(await s.auth.consumeChallenge(c.nonce, c.expiresAtMs + 1)).toBeNull();
      expect(await s.auth.consumeChallenge(c.nonce, c.expiresAtMs - 1)).toEqual(c);
    });

    it('shows an open challenge without consuming it', async () => {
      const s = get();
      const c = challenge();
      await s.auth.putChallenge(c);
      expect(await s.auth.openChallenge(c.nonce, T0 + 1)).toEqual(c);
      expect(await s.auth.openChallenge(c.nonce, T0 + 1)).toEqual(c);
      expect(await s.auth.openChallenge(c.nonce, c.expiresAtMs)).toBeNull();
      expect(await s.auth.openChallenge('unknown-nonce', T0)).toBeNull();
      expect(await s.auth.consumeChallenge(c.nonce, T0 + 2)).toEqual(c);
      expect(await s.auth.openChallenge(c.nonce, T0 + 3)).toBeNull();
    });

    it('consumes only with the issued message when one is given', async () => {
      const s = get();
      const c = challenge();
      await s.auth.putChallenge(c);
      expect(await s.auth.consumeChallenge(c.nonce, T0 + 1, `${c.message} `)).toBeNull();
      expect(await s.auth.openChallenge(c.nonce, T0 + 1)).toEqual(c);
      expect(await s.auth.consumeChallenge(c.nonce, T0 + 1, c.message)).toEqual(c);
      expect(await s.auth.consumeChallenge(c.nonce, T0 + 2, c.message)).toBeNull();
    });

    it('refuses a duplicate challenge nonce', async () => {
      const s = get();
      const c = challenge();
      await s.auth.putChallenge(c);
      await expect(s.auth.putChallenge({ ...c, address: 'Other' })).rejects.toBeInstanceOf(
        UniqueViolationError,
      );
      expect(await s.auth.consumeChallenge(c.nonce, T0)).toEqual(c);
    });
  });

  describe('sessions', () => {
    it('returns a live session and stops after expiry or revocation', async () => {
      const s = get();
      const live = { tokenHash: 'h-live', owner: alice, createdAtMs: T0, expiresAtMs: T0 + 1_000 };
      const other = { tokenHash: 'h-other', owner: bob, createdAtMs: T0, expiresAtMs: T0 + 1_000 };
      await s.auth.createSession(live);
      await s.auth.createSession(other);

      expect(await s.auth.session('h-live', T0 + 1)).toEqual(live);
      expect(await s.auth.session('h-live', T0 + 1_000)).toBeNull();
      expect(await s.auth.session('h-unknown', T0)).toBeNull();

      expect(await s.auth.revokeSession('h-live')).toBe(true);
      expect(await s.auth.session('h-live', T0 + 1)).toBeNull();
      expect(await s.auth.revokeSession('h-live')).toBe(false);
      expect(await s.auth.revokeSession('h-unknown')).toBe(false);
      expect(await s.auth.session('h-other', T0 + 1)).toEqual(other);
      await expect(s.auth.createSession(live)).rejects.toBeInstanceOf(UniqueViolationError);
    });

    it('prunes expired challenges and sessions, and only those', async () => {
      const s = get();
      const old = challenge({ expiresAtMs: T0 - 1 });
      const fresh = challenge({ expiresAtMs: T0 + 300_000 });
      await s.auth.putChallenge(old);
      await s.auth.putChallenge(fresh);
      await s.auth.createSession({
        tokenHash: 'h-old',
        owner: alice,
        createdAtMs: T0 - 10,
        expiresAtMs: T0 - 1,
      });
      await s.auth.createSession({ tokenHash: 'h-new', owner: bob, createdAtMs: T0, expiresAtMs: T0 + 1000 });
      expect(await s.auth.pruneExpired(T0)).toBeGreaterThanOrEqual(2);
      expect(await s.auth.consumeChallenge(fresh.nonce, T0)).toEqual(fresh);
      expect(await s.auth.session('h-new', T0)).not.toBeNull();
      // The pruned session cannot come back, even with a clock that runs backwards.
      expect(await s.auth.session('h-old', T0 - 5)).toBeNull();
    });
  });
}
