/**
 * The minimal paid server's record (minimal-paid.ts): SQLite in WAL mode, synchronous=NORMAL,
 * a table with only the two unique keys, and a group commit: the writes of every request
 * waiting share one transaction and one fdatasync of the WAL, and none resolves before that
 * sync. `npm run bench:store` (bench/store.ts) runs the same record beside the gateway's store.
 */
import { fdatasync, openSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { promisify } from 'node:util';

const fdatasyncFd = promisify(fdatasync);

export interface MinimalRecord {
  db: DatabaseSync;
  /** (tx_id, nonce, request_hash, payer, created_at_ms): one row, or none on either key's clash. */
  insertClaim: StatementSync;
  /** (response_status, response_body, tx_id): delivered, if still in progress. */
  complete: StatementSync;
  /** (tx_id): state, nonce, request_hash, response_status, response_body. */
  byTx: StatementSync;
  /** Runs `run` in the next shared transaction; resolves once that transaction is on disk. */
  durably(run: () => number): Promise<number>;
  /** Whether a commit may not be on disk yet (a sync running, writes queued). */
  pending(): boolean;
  /** Commits made so far (each followed by one fdatasync of the WAL). */
  counts: { commits: number };
}

export function openMinimalRecord(file: string): MinimalRecord {
  const db = new DatabaseSync(file);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec(`CREATE TABLE IF NOT EXISTS redemptions (
  tx_id TEXT PRIMARY KEY, nonce TEXT NOT NULL UNIQUE, request_hash TEXT NOT NULL, payer TEXT NOT NULL,
  state TEXT NOT NULL, created_at_ms INTEGER NOT NULL, response_status INTEGER, response_body BLOB)`);
  const insertClaim = db.prepare(
    `INSERT INTO redemptions (tx_id, nonce, request_hash, payer, state, created_at_ms)
   VALUES (?, ?, ?, ?, 'in_progress', ?) ON CONFLICT DO NOTHING`,
  );
  const complete = db.prepare(
    `UPDATE redemptions SET state = 'delivered', response_status = ?, response_body = ? WHERE tx_id = ? AND state = 'in_progress'`,
  );
  const byTx = db.prepare(
    'SELECT state, nonce, request_hash, response_status, response_body FROM redemptions WHERE tx_id = ?',
  );
  db.exec('BEGIN');
  db.exec('COMMIT');
  const walFd = openSync(`${file}-wal`, 'r+');
  const counts = { commits: 0 };

  type Write = { run: () => number; resolve: (changes: number) => void; reject: (e: unknown) => void };
  let queue: Write[] = [];
  let scheduled = false;
  let syncing = false;
  function durably(run: () => number): Promise<number> {
    return new Promise((resolve, reject) => {
      queue.push({ run, resolve, reject });
      if (!scheduled && !syncing) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  }
  async function flush(): Promise<void> {
    scheduled = false;
    const batch = queue;
    queue = [];
    const out: (number | Error)[] = [];
    syncing = true;
    try {
      db.exec('BEGIN IMMEDIATE');
      try {
        for (const w of batch) {
          try {
            out.push(w.run());
          } catch (e) {
            out.push(e as Error);
          }
        }
        db.exec('COMMIT');
        counts.commits++;
      } catch (e) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw e;
      }
      await fdatasyncFd(walFd);
      for (let i = 0; i < batch.length; i++) {
        const r = out[i]!;
        if (typeof r === 'number') batch[i]!.resolve(r);
        else batch[i]!.reject(r);
      }
    } catch (e) {
      for (const w of batch) w.reject(e);
    } finally {
      syncing = false;
      if (queue.length > 0 && !scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    }
  }
  return { db, insertClaim, complete, byTx, durably, pending: () => syncing || queue.length > 0, counts };
}
