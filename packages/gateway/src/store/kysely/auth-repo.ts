import type { Selectable } from 'kysely';
import type { AuthChallenge, AuthRepo, Chain, Session } from '../store.ts';
import type { Backend } from './backend.ts';
import { toNum } from './rows.ts';
import type { AuthChallengesTable } from './schema.ts';
import { translateUnique } from './unique.ts';

function toChallenge(r: Selectable<AuthChallengesTable>): AuthChallenge {
  return {
    nonce: r.nonce,
    chain: r.chain as Chain,
    address: r.address,
    message: r.message,
    issuedAtMs: toNum(r.issued_at_ms),
    expiresAtMs: toNum(r.expires_at_ms),
  };
}

export function authRepo(backend: Backend): AuthRepo {
  const { db } = backend;
  return {
    async putChallenge(c) {
      await translateUnique(backend, 'sign-in challenge nonce already exists', () =>
        db
          .insertInto('auth_challenges')
          .values({
            nonce: c.nonce,
            chain: c.chain,
            address: c.address,
            message: c.message,
            issued_at_ms: c.issuedAtMs,
            expires_at_ms: c.expiresAtMs,
            used: false,
          })
          .execute(),
      );
    },

    async openChallenge(nonce, nowMs) {
      const r = await db
        .selectFrom('auth_challenges')
        .selectAll()
        .where('nonce', '=', nonce)
        .where('used', '=', false)
        .where('expires_at_ms', '>', nowMs)
        .executeTakeFirst();
      return r ? toChallenge(r) : null;
    },

    async consumeChallenge(nonce, nowMs, message) {
      // One conditional UPDATE: of concurrent callers (any process) exactly one sees the row.
      let q = db
        .updateTable('auth_challenges')
        .set({ used: true })
        .where('nonce', '=', nonce)
        .where('used', '=', false)
        .where('expires_at_ms', '>', nowMs);
      if (message !== undefined) q = q.where('message', '=', message);
      const r = await q.returningAll().executeTakeFirst();
      return r ? toChallenge(r) : null;
    },

    async createSession(s) {
      await translateUnique(backend, 'session token hash already exists', () =>
        db
          .insertInto('sessions')
          .values({
            token_hash: s.tokenHash,
            owner_chain: s.owner.chain,
            owner_address: s.owner.address,
            created_at_ms: s.createdAtMs,
            expires_at_ms: s.expiresAtMs,
            revoked: false,
          })
          .execute(),
      );
    },

    async session(tokenHash, nowMs): Promise<Session | null> {
      const r = await db
        .selectFrom('sessions')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .where('revoked', '=', false)
        .where('expires_at_ms', '>', nowMs)
        .executeTakeFirst();
      if (!r) return null;
      return {
        tokenHash: r.token_hash,
        owner: { chain: r.owner_chain as Chain, address: r.owner_address },
        createdAtMs: toNum(r.created_at_ms),
        expiresAtMs: toNum(r.expires_at_ms),
      };
    },

    async revokeSession(tokenHash) {
      const r = await db
        .updateTable('sessions')
        .set({ revoked: true })
        .where('token_hash', '=', tokenHash)
        .where('revoked', '=', false)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async pruneExpired(nowMs) {
      const challenges = await db
        .deleteFrom('auth_challenges')
        .where('expires_at_ms', '<', nowMs)
        .executeTakeFirst();
      const sessions = await db.deleteFrom('sessions').where('expires_at_ms', '<', nowMs).executeTakeFirst();
      return Number(challenges.numDeletedRows) + Number(sessions.numDeletedRows);
    },
  };
}
