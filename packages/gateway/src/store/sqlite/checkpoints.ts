/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT
 * that pushes the WAL past 1000 pages: it copies those pages into the database file and
 * syncs both files, and node:sqlite is synchronous, so the whole gateway stood still for it
 * (6–10 ms at a time under load, a sixth of a busy store's wall time). The store turns it
 * off (`wal_autocheckpoint = 0`) and a worker thread with its own connection
 * (checkpoint-worker.ts) checkpoints instead, at most once per `everyMs` after a commit.
 *
 * A cycle has two steps. The first copies what the WAL holds while the gateway goes on
 * committing. When the WAL has grown past SQLite's own checkpoint size (1000 pages), a
 * second step runs while no statement can run on the gateway's handle (the driver's lock:
 * commits, reads and transactions wait, the event loop does not) and copies the few pages
 * committed during the first, so the cycle ends with every frame copied and the next write
 * starts the WAL over from its beginning. Without it a busy gateway, always committing
 * during the copy, would never reuse the WAL and the file would grow for ever; a quieter
 * one starts it over by itself after a first step that nothing interrupted.
 *
 * Nothing about durability changes: a commit is on disk once its WAL frames are synced
 * (wal-sync.ts), before and after a checkpoint copies them. If the worker cannot start,
 * stops, or a checkpoint fails, the failure is logged and SQLite's own automatic checkpoint
 * is turned back on, so the WAL stays bounded as before; except after a failed WAL sync,
 * when no checkpoint runs at all (MainHandle.writable; dialect.ts keeps the close from
 * checkpointing too).
 */
import { Worker } from 'node:worker_threads';

export interface Checkpoints {
  /** A commit was made on the gateway's handle: the WAL grew. */
  committed(): void;
  /** Waits for a running cycle and stops the worker; the handle is closed after this. */
  close(): Promise<void>;
}

/** For `:memory:` databases, or with SQLite's own automatic checkpoint. */
export const NO_CHECKPOINTS: Checkpoints = {
  committed() {},
  close: () => Promise.resolve(),
};

/** What the store gives the checkpointer of the gateway's own handle. */
export interface MainHandle {
  /** Runs `fn` while no statement can run on the handle. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Turns SQLite's automatic checkpoint back on (the worker is gone). */
  autoCheckpoint(): void;
  /**
   * False once a WAL sync failed (wal-sync.ts): the WAL's pages may then not be what was
   * committed, and copying them into the database could spread the damage. No checkpoint
   * runs after that, neither here nor SQLite's own.
   */
  writable(): boolean;
}

interface CheckpointLog {
  error(obj: object, msg?: string): void;
}

/** SQLite's default automatic checkpoint, in pages: what a fallback turns back on. */
export const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

type Reply = { ok: true; busy: boolean; log: number; checkpointed: number } | { ok: false; message: string };

export function backgroundCheckpoints(
  path: string,
  main: MainHandle,
  opts: { everyMs?: number; log?: CheckpointLog } = {},
): Checkpoints {
  const everyMs = opts.everyMs ?? 200;
  const worker = new Worker(new URL('./checkpoint-worker.ts', import.meta.url), {
    workerData: { path },
  });
  let stopped = false;
  let closing = false;
  /** The request in flight, answered by the worker's next message. */
  let waiting: { resolve(r: Reply): void; reject(err: Error): void } | null = null;
  let cycle: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let dirty = false;
  let lastEnd = 0;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));

  /** No more checkpoints from the thread: a request in flight fails, the thread is ended. */
  const stop = (err: Error) => {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
    waiting?.reject(err);
    waiting = null;
    void worker.terminate();
  };

  /** The worker is gone or failing: SQLite checkpoints on the handle again, as before. */
  const fallBack = (err: unknown, msg: string) => {
    if (stopped) return;
    const error = err instanceof Error ? err : new Error(String(err));
    stop(error);
    if (closing) {
      opts.log?.error({ err: error }, `${msg} while the store closed`);
    } else if (!main.writable()) {
      opts.log?.error({ err: error }, `${msg}; no checkpoint runs after a failed WAL sync`);
    } else {
      opts.log?.error({ err: error }, `${msg}; SQLite checkpoints on the event loop again`);
      try {
        main.autoCheckpoint();
      } catch (e) {
        opts.log?.error({ err: e }, 'could not turn SQLite automatic checkpoints back on');
      }
    }
  };

  worker.on('message', (m: Reply | { ready: true }) => {
    if ('ready' in m) return;
    const w = waiting;
    waiting = null;
    if (!closing) worker.unref();
    w?.resolve(m);
  });
  worker.on('error', (err) => fallBack(err, 'the WAL checkpoint thread failed'));
  worker.on('exit', (code) => fallBack(new Error(`exit code ${code}`), 'the WAL checkpoint thread stopped'));
  // After the listeners (adding one references the thread again): an idle thread never keeps
  // the process alive; close() references it while it waits for it.
  worker.unref();

  // A request in flight references the thread: the pass that holds the handle has writes
  // waiting on its answer, and a process with nothing else to do must not exit under them.
  const ask = (): Promise<Reply> =>
    new Promise<Reply>((resolve, reject) => {
      if (stopped) return reject(new Error('the WAL checkpoint thread is stopped'));
      waiting = { resolve, reject };
      worker.ref();
      worker.postMessage('checkpoint');
    });
  const checked = (r: Reply): void => {
    if (!r.ok) throw new Error(r.message);
  };

  /** A failed WAL sync: checkpoints stop for good (see MainHandle.writable). */
  const halted = (): boolean => {
    if (main.writable()) return false;
    fallBack(new Error('a sync of the SQLite WAL failed'), 'WAL checkpoints stopped');
    return true;
  };

  async function runCycle(): Promise<void> {
    dirty = false;
    try {
      if (halted()) return;
      const bulk = await ask();
      checked(bulk);
      // A WAL the first pass copied whole starts over at the next write; one past SQLite's own
      // checkpoint size (a gateway busy writing all along) gets the pass that holds the handle.
      if (bulk.ok && bulk.log >= SQLITE_AUTOCHECKPOINT_PAGES && !halted()) {
        checked(await main.exclusive(ask));
      }
    } catch (err) {
      fallBack(err, 'a WAL checkpoint failed');
    } finally {
      lastEnd = performance.now();
      cycle = null;
      if (dirty && !stopped && !closing) schedule();
    }
  }

  function schedule(): void {
    const wait = Math.max(0, lastEnd + everyMs - performance.now());
    timer = setTimeout(() => {
      timer = null;
      if (stopped || closing) return;
      cycle = runCycle();
    }, wait);
    timer.unref();
  }

  return {
    committed() {
      dirty = true;
      if (timer || cycle || stopped || closing) return;
      schedule();
    },
    async close() {
      closing = true;
      if (timer) clearTimeout(timer);
      timer = null;
      // Referenced first, so a process that awaits close() stays alive until the thread is gone.
      worker.ref();
      await cycle;
      if (!stopped) {
        stopped = true;
        worker.postMessage('close');
      }
      // The thread's connection closes before the handle's, which then removes the WAL.
      await exited;
    },
  };
}
