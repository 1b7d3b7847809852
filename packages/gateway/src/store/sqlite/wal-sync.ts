/**
 * Durable commits without stalling the event loop. With `synchronous=FULL`, SQLite calls
 * fdatasync on the WAL inside every COMMIT, and node:sqlite is synchronous, so the whole
 * gateway waited for the disk once per commit. The store runs `synchronous=NORMAL`
 * instead (SQLite still syncs at checkpoints, so a checkpoint never loses a committed
 * frame) and makes every acknowledged commit durable itself: a write's promise settles
 * only after an fdatasync of the WAL file that *began after* its COMMIT returned, run on
 * libuv's thread pool. That is the same guarantee FULL gives (FULL syncs the WAL and
 * nothing else at commit), and concurrent commits share one sync.
 *
 * Within this process no read runs on top of a commit that is not synced yet (dialect.ts).
 * Another process on the same file (an operator command) can read a commit up to one sync
 * before it is durable; only a power loss inside that window could take it back.
 *
 * The WAL file is opened once, on the first sync, and kept: SQLite does not delete or
 * replace it while this process holds the database open, and a descriptor that stays open
 * is told of a failed write-back (one opened later might not be, on Linux).
 */
import { type FileHandle, open } from 'node:fs/promises';

export interface Durability {
  /** Resolves once everything written before the call is on disk; rejects if it may not be. */
  sync(): Promise<void>;
  close(): Promise<void>;
  /** Why nothing may be written any more (a sync failed for good), or null. */
  failure?(): Error | null;
}

/** For `:memory:` databases: nothing to make durable. */
export const NO_DURABILITY: Durability = {
  sync: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Coalesces syncs: a caller joins the next sync to start; while one runs, every new caller
 * waits for the one after it (the running one may have begun before their commit).
 */
export class CoalescingSync implements Durability {
  readonly #datasync: () => Promise<void>;
  #running: Promise<void> | null = null;
  #next: Waiter[] = [];

  constructor(datasync: () => Promise<void>) {
    this.#datasync = datasync;
  }

  sync(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#next.push({ resolve, reject });
      if (!this.#running) this.#start();
    });
  }

  #start(): void {
    const waiters = this.#next;
    this.#next = [];
    this.#running = this.#datasync().then(
      () => {
        for (const w of waiters) w.resolve();
      },
      (err: unknown) => {
        for (const w of waiters) w.reject(err);
      },
    );
    void this.#running.then(() => {
      this.#running = null;
      if (this.#next.length > 0) this.#start();
    });
  }

  /** Waits for the syncs already asked for. */
  async close(): Promise<void> {
    while (this.#running) await this.#running;
  }
}

/**
 * fdatasync of `walPath` through one descriptor kept open. A sync that fails breaks it for
 * good: after a failed write-back Linux may mark the lost pages clean and report the error
 * only once, so a later sync that succeeds proves nothing about the writes before it
 * (PostgreSQL stops for the same reason). Every later sync fails too, and `failure()` says
 * so: the store runs no more writes (dialect.ts, group-commit.ts) and no more checkpoints
 * (checkpoints.ts), no commit is acknowledged and no read answers (the store's ping fails:
 * readiness reports the database down) until the gateway restarts and SQLite recovers from
 * what is on disk.
 * `datasync` is the sync itself (tests make it fail).
 */
export function walFileSync(
  walPath: string,
  opts: { datasync?: (handle: FileHandle) => Promise<void> } = {},
): Durability {
  const datasync = opts.datasync ?? ((h: FileHandle) => h.datasync());
  let handle: Promise<FileHandle> | null = null;
  let closed = false;
  let broken: Error | null = null;
  const sync = new CoalescingSync(async () => {
    // A sync asked for after close would open a descriptor nobody closes.
    if (closed) throw new Error('the store is closed');
    if (broken !== null) throw broken;
    handle ??= open(walPath, 'r').catch((err: unknown) => {
      handle = null;
      throw err;
    });
    const h = await handle;
    try {
      await datasync(h);
    } catch (err) {
      broken = new Error('an earlier sync of the SQLite WAL failed; restart the gateway', { cause: err });
      throw err;
    }
  });
  return {
    sync: () => sync.sync(),
    failure: () => broken,
    async close() {
      await sync.close();
      closed = true;
      const h = handle;
      handle = null;
      await (await h?.catch(() => null))?.close();
    },
  };
}
