/**
 * Where the minimal paid server (minimal-paid.ts) keeps its redemptions, one of two:
 *
 * - `minimal`: its own record (minimal-record.ts): a table with only the two unique keys and a
 *   group commit, the leanest durable record of a paid request;
 * - `tollgate`: the gateway's own store (openStore on SQLite: the redemptions table with its
 *   lease, retry budget and read model, the group commit, the WAL sync on libuv's pool, the
 *   background checkpoints), asked what settlement asks it, with the same inputs: the look-up
 *   by transaction, the claim, the completion with the answer and its headers.
 *
 * Both keep every write durable before the answer. The bench runs the server with each, so the
 * cost of the gateway's record within a paid request is measured in the same rounds.
 */
import { DatabaseSync } from 'node:sqlite';
import { openMinimalRecord } from './minimal-record.ts';

/** The requirement token's payload, as the gateway writes it (payments/requirement-token.ts). */
export type Wire = {
  s: string;
  u: string;
  n: string;
  h: string;
  e: number;
  p: string;
  f: string;
  o: { c: string; w: string; a?: string; s: [number, string, string][] }[];
};

/** A paid request to record: the proof's transaction, payer and network, its token and claims. */
export interface ToClaim {
  sig: string;
  payer: string;
  network: string;
  requirementId: string;
  w: Wire;
}

export interface Known {
  nonce: string;
  /** The stored answer once delivered; null while in progress (or no longer kept). */
  response: { status: number; body: Buffer } | null;
}

/** What completes a claim: the transaction, and the redemption's id and attempt (the minimal record keys by the transaction). */
export interface Claim {
  sig: string;
  id: string;
  attempt: number;
}

export interface PaidRecord {
  /** The redemption of `sig`, if any; nothing is answered from a write not yet on disk. */
  known(sig: string, network: string): Promise<Known | null>;
  /** Claims a new payment, durably; null when the transaction or the nonce was claimed already. */
  claim(c: ToClaim): Promise<Claim | null>;
  /** Stores the delivered answer, durably. */
  complete(
    c: Claim,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    body: Buffer,
  ): Promise<void>;
  /** Forgets every payment redeemed so far, so the same proofs are new again (between runs: no request in flight). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function openPaidRecord(kind: string, file: string): Promise<PaidRecord> {
  if (kind === 'minimal') return minimal(file);
  if (kind === 'tollgate') return tollgate(file);
  throw new Error(`BENCH_RECORD: expected minimal or tollgate, got ${kind}`);
}

function minimal(file: string): PaidRecord {
  const { db, insertClaim, complete, byTx, durably, pending } = openMinimalRecord(file);
  return {
    async known(sig) {
      const row = byTx.get(sig) as
        | { state: string; nonce: string; response_status: number; response_body: Uint8Array }
        | undefined;
      if (!row) return null;
      if (pending()) await durably(() => 0);
      return {
        nonce: row.nonce,
        response:
          row.state === 'delivered'
            ? { status: row.response_status, body: Buffer.from(row.response_body) }
            : null,
      };
    },
    async claim({ sig, payer, w }) {
      const changes = await durably(() => Number(insertClaim.run(sig, w.n, w.h, payer, Date.now()).changes));
      return changes === 1 ? { sig, id: sig, attempt: 1 } : null;
    },
    async complete(c, status, _headers, body) {
      await durably(() => Number(complete.run(status, body, c.sig).changes));
    },
    async reset() {
      db.exec('DELETE FROM redemptions');
    },
    async close() {
      db.close();
    },
  };
}

/** The project the bench's endpoint belongs to, as the gateway passes it (the read model's key). */
const PROJECT_ID = 'prj_01a222a8230f0000027678b4145d7bfc';

async function tollgate(file: string): Promise<PaidRecord> {
  // Loaded only here: the minimal variant's process stays as lean as it was.
  const { openStore } = await import('../../packages/gateway/src/store/open-store.ts');
  const { filterResponseHeaders } = await import('../../packages/gateway/src/proxy/forward-headers.ts');
  const { flattenHeaders } = await import('../../packages/gateway/src/http/marketplace-deliver.ts');
  const store = await openStore(`sqlite:${file}`);
  // Between runs a second connection frees the keys of the rows written (reset): the rows
  // stay, so the table grows from run to run as the gateway's does, and the store, its
  // checkpointer and its prepared statements stay as they are in a gateway serving for a while.
  const admin = new DatabaseSync(file, { timeout: 5000 });
  return {
    async known(sig, network) {
      const r = await store.redemptions.byTx('solana', network, sig);
      if (!r) return null;
      return {
        nonce: r.nonce,
        response:
          r.state === 'delivered' && r.response
            ? { status: r.response.status, body: Buffer.from(r.response.body) }
            : null,
      };
    },
    async claim({ sig, payer, network, requirementId, w }) {
      // What settlement's claim() passes (payments/settle.ts), for the Solana option paid.
      const option = w.o.find((o) => o.c === 'solana');
      if (!option) return null;
      const splits = option.s.map(([t, payTo, amount]) => ({
        recipientType: t === 0 ? 'provider' : 'platform',
        payTo,
        amount,
      }));
      const result = await store.redemptions.claim({
        chain: 'solana',
        network,
        txId: sig,
        nonce: w.n,
        requestHash: w.h,
        requirementId,
        payer,
        projectId: PROJECT_ID,
        endpointId: w.u.startsWith('ep:') ? w.u.slice(3) : null,
        amount: option.s.reduce((sum, [, , amount]) => sum + BigInt(amount), 0n),
        fee: BigInt(w.f),
        meta: { subject: w.u, price: w.p, fee: w.f, splits },
        nowMs: Date.now(),
        leaseMs: 60_000,
      });
      return result.kind === 'claimed'
        ? { sig, id: result.redemption.id, attempt: result.redemption.attempt }
        : null;
    },
    async complete(c, status, headers, body) {
      const { id, attempt } = c;
      // The headers the gateway stores: the upstream's, hop-by-hop ones dropped (proxy/forward.ts).
      const stored = { status, headers: flattenHeaders(filterResponseHeaders(headers)), body };
      if (!(await store.redemptions.complete(id, attempt, stored, Date.now())))
        throw new Error('the completion lost its lease');
    },
    async reset() {
      // The same proofs come again: their transactions and nonces must be new to the table.
      admin.exec(
        "UPDATE redemptions SET tx_id = 'old:' || id, nonce = 'old:' || id WHERE tx_id NOT LIKE 'old:%'",
      );
    },
    async close() {
      admin.close();
      await store.close();
    },
  };
}
