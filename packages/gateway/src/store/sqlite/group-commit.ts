/**
 * Group commit for node:sqlite. node:sqlite is synchronous, so every autocommit write
 * used to run its own COMMIT on the event loop; a paid request makes two. Writes issued
 * outside an explicit transaction are queued instead, and the writes that arrive in the
 * same event-loop turn run in one BEGIN IMMEDIATE … COMMIT. Each caller's promise settles
 * only after that COMMIT and after the WAL holding it is on disk (wal-sync.ts: one
 * fdatasync on the thread pool for all of them), so nothing is acknowledged before it is
 * durable. If a write fails (a constraint, a bad parameter), the batch is rolled back and
 * run again with each write inside its own SAVEPOINT, so the failing one is undone and
 * fails only its own caller; if the whole transaction cannot commit, the writes are run
 * again one by one, each in its own autocommit, so every caller gets the result (or the
 * error) it would have had without batching.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type { QueryResult } from 'kysely';
import type { Checkpoints } from './checkpoints.ts';
import type { Durability } from './wal-sync.ts';

/** Statements are prepared once and reused: the hot paths run the same few queries. */
const STATEMENT_CACHE_SIZE = 256;

/** A single write statement that may share a transaction (INSERT, UPDATE, DELETE, REPLACE). */
const BATCHABLE = /^\s*(insert|update|delete|replace)\b/i;

export function isBatchableWrite(sqlText: string): boolean {
  return BATCHABLE.test(sqlText);
}

interface Prepared {
  stmt: StatementSync;
  /** Returns rows (a SELECT, or a write with RETURNING). */
  reader: boolean;
}

interface Pending {
  sql: string;
  params: SQLInputValue[];
  result?: QueryResult<unknown>;
  error?: unknown;
  done: boolean;
  resolve(r: QueryResult<unknown>): void;
  reject(e: unknown): void;
}

export class SqliteExecutor {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, Prepared>();
  #queue: Pending[] = [];
  #scheduled = false;
  /** Runs a flush once nothing else holds the connection (an open transaction). */
  readonly #whenFree: (flush: () => void) => void;
  readonly #durability: Durability;
  readonly #checkpoints: Checkpoints;

  readonly #onStuck: (err: Error) => void;

  constructor(
    db: DatabaseSync,
    whenFree: (flush: () => void) => void,
    durability: Durability,
    checkpoints: Checkpoints,
    onStuck: (err: Error) => void = () => {},
  ) {
    this.#db = db;
    this.#whenFree = whenFree;
    this.#durability = durability;
    this.#checkpoints = checkpoints;
    this.#onStuck = onStuck;
  }

  /**
   * Set for good when a batch's ROLLBACK failed and left its transaction open on the handle:
   * a read would see the batch's uncommitted rows and a write would join it, so nothing runs
   * on the handle any more (until the gateway restarts and SQLite recovers from the file).
   */
  #stuck: Error | null = null;

  /** Why no statement at all may run on the handle, reads included, or null. */
  unusable(): Error | null {
    return this.#stuck;
  }

  /**
   * Rolls back the transaction open on the handle, if any: the group commit's failed batch,
   * or a transaction its connection gave back open (dialect.ts). One that stays open makes
   * the handle stuck for good, said once through `onStuck`. Returns whether a transaction was
   * open and is now gone.
   */
  rollbackOrStick(): boolean {
    if (this.#stuck || !this.#db.isTransaction) return false;
    try {
      this.run('rollback', []);
    } catch (err) {
      // SQLite rolls back on its own after some failures: only a transaction still open is stuck.
      if (this.#db.isTransaction) {
        this.#stuck = new Error('the SQLite handle is inside a transaction that could not be rolled back', {
          cause: err,
        });
        this.#onStuck(this.#stuck);
        return false;
      }
    }
    return true;
  }

  /** Commits made through this handle, and how many of them are known to be on disk. */
  #committed = 0;
  #synced = 0;

  /** Counts a commit made outside the group (an explicit transaction, a lone statement). */
  noteCommit(): void {
    this.#committed += 1;
    this.#checkpoints.committed();
  }

  /** The last sync asked for, and how many commits it covers (all made before it was asked). */
  #asked: { upTo: number; done: Promise<void> } | null = null;

  /**
   * Resolves once every commit made so far is on disk. A sync already asked for after the
   * latest commit covers it: the caller joins that one instead of asking for another (reads
   * of a busy store would otherwise add a sync each).
   */
  durable(): Promise<void> {
    const upTo = this.#committed;
    const asked = this.#asked;
    if (asked !== null && asked.upTo >= upTo) return asked.done;
    const done = this.#durability.sync().then(() => {
      if (upTo > this.#synced) this.#synced = upTo;
    });
    this.#asked = { upTo, done };
    // A failed sync fails its own waiters only; the next caller asks for a new one.
    done.catch(() => {
      if (this.#asked?.done === done) this.#asked = null;
    });
    return done;
  }

  /**
   * Null when every commit is known to be on disk; else when it will be. Reads wait for
   * it, so no caller acts on a row that a crash could still take back.
   */
  untilDurable(): Promise<void> | null {
    return this.#committed > this.#synced ? this.durable() : null;
  }

  /** Why no statement that writes may run any more (wal-sync.ts, or the handle is stuck), or null. */
  failure(): Error | null {
    return this.#stuck ?? this.#durability.failure?.() ?? null;
  }

  get db(): DatabaseSync {
    return this.#db;
  }

  prepare(sqlText: string): Prepared {
    let entry = this.#statements.get(sqlText);
    if (entry) {
      this.#statements.delete(sqlText);
    } else {
      const stmt = this.#db.prepare(sqlText);
      entry = { stmt, reader: stmt.columns().length > 0 };
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.#statements.keys().next().value;
        if (oldest !== undefined) this.#statements.delete(oldest);
      }
    }
    this.#statements.set(sqlText, entry);
    return entry;
  }

  /** Runs one statement now, on whatever transaction state the connection is in. */
  run<R>(sqlText: string, params: SQLInputValue[]): QueryResult<R> {
    const { stmt, reader } = this.prepare(sqlText);
    if (reader) return { rows: stmt.all(...params) as R[] };
    const { changes, lastInsertRowid } = stmt.run(...params);
    return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
  }

  /** Queues an autocommit write; resolves once the transaction holding it committed. */
  write<R>(sqlText: string, params: SQLInputValue[]): Promise<QueryResult<R>> {
    return new Promise<QueryResult<R>>((resolve, reject) => {
      this.#queue.push({
        sql: sqlText,
        params,
        done: false,
        resolve: resolve as (r: QueryResult<unknown>) => void,
        reject,
      });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // setImmediate: after this turn's I/O callbacks, so the writes they issue join in.
        setImmediate(() => this.#whenFree(() => this.#flush()));
      }
    });
  }

  #flush(): void {
    const batch = this.#queue;
    this.#queue = [];
    this.#scheduled = false;
    if (batch.length === 0) return;
    // The handle is free (whenFree): a transaction open now was left by someone, and the
    // batch must not run inside it.
    this.rollbackOrStick();
    const failure = this.failure();
    if (failure) {
      for (const p of batch) p.reject(failure);
      return;
    }
    if (batch.length === 1 || !this.#runBatched(batch)) {
      for (const p of batch) this.#runAlone(p);
    }
    const failed = (p: Pending) => p.error !== undefined || !p.result;
    if (batch.every(failed)) {
      // Nothing committed, but a failure can come from a row of an earlier commit (a unique
      // key): answer once that is on disk, as a read would.
      const answer = () => {
        for (const p of batch) p.reject(p.error);
      };
      const pending = this.untilDurable();
      if (pending) pending.then(answer, answer);
      else answer();
      return;
    }
    // Even a failed write may have seen a row of this commit: every answer waits for the disk.
    this.noteCommit();
    this.durable().then(
      () => {
        for (const p of batch) {
          if (failed(p)) p.reject(p.error);
          else p.resolve(p.result!);
        }
      },
      (err: unknown) => {
        for (const p of batch) p.reject(failed(p) ? p.error : err);
      },
    );
  }

  /**
   * True when the batch committed; false when it did not (and nothing of it stayed, unless
   * its ROLLBACK failed: then the handle is stuck, see #stuck). The
   * writes first run one after the other in one transaction; only if one of them fails is
   * it all rolled back and run again with a SAVEPOINT around each write, so the failing
   * one is undone alone. Savepoints on every write cost a paid request about 40 µs of the store's
   * 190 (bench:store, ninth session): their own statements and the statement journal they keep.
   */
  #runBatched(batch: Pending[]): boolean {
    return this.#runInOne(batch, false) ?? this.#runInOne(batch, true) === true;
  }

  /** One pass of #runBatched: true when committed; false or, without savepoints, null (a write failed) when not. */
  #runInOne(batch: Pending[], savepoints: boolean): boolean | null {
    try {
      this.run('begin immediate', []);
    } catch {
      return false;
    }
    let failedWrite = false;
    for (const p of batch) {
      if (savepoints) {
        try {
          this.run('savepoint group_write', []);
        } catch {
          break;
        }
      }
      try {
        p.result = this.run(p.sql, p.params);
        if (savepoints) this.run('release group_write', []);
      } catch (err) {
        p.error = err;
        p.result = undefined;
        if (!savepoints) {
          failedWrite = true;
          break;
        }
        if (!this.#db.isTransaction) break; // SQLite gave up the whole transaction.
        try {
          this.run('rollback to group_write', []);
          this.run('release group_write', []);
        } catch {
          break;
        }
      }
      p.done = true;
    }
    const complete = !failedWrite && batch.every((p) => p.done);
    if (complete) {
      try {
        this.run('commit', []);
        return true;
      } catch {
        // fall through: roll back and run each write alone
      }
    }
    this.rollbackOrStick();
    for (const p of batch) {
      p.result = undefined;
      p.error = undefined;
      p.done = false;
    }
    return failedWrite ? null : false;
  }

  #runAlone(p: Pending): void {
    // A transaction that could not be rolled back is still open: a write run now would join
    // it, and be acknowledged without ever being committed.
    if (this.#stuck) {
      p.error = this.#stuck;
      p.done = true;
      return;
    }
    try {
      p.result = this.run(p.sql, p.params);
    } catch (err) {
      p.error = err ?? new Error('sqlite write failed');
    }
    p.done = true;
  }
}
