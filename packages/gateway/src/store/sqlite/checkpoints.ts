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
 * is turned back on, so the WAL stays bounded as before.
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
  worker.unref();
  let stopped = false;
  let closing = false;
  /** The request in flight, answered by the worker's next message. */
  let waiting: { resolve(r: Reply): void; reject(err: Error): void } | null = null;
  let cycle: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let dirty = false;
  let lastEnd = 0;

  /** The worker is gone or failing: SQLite checkpoints on the handle again, as before. */
  const fallBack = (err: unknown, msg: string) => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
    if (!closing) {
      opts.log?.error({ err }, `${msg}; SQLite checkpoints on the event loop again`);
      try {
        main.autoCheckpoint();
      } catch (e) {
        opts.log?.error({ err: e }, 'could not turn SQLite automatic checkpoints back on');
      }
    }
    waiting?.reject(err instanceof Error ? err : new Error(String(err)));
    waiting = null;
    void worker.terminate();
  };

  worker.on('message', (m: Reply | { ready: true }) => {
    if ('ready' in m) return;
    const w = waiting;
    waiting = null;
    w?.resolve(m);
  });
  worker.on('error', (err) => fallBack(err, 'the WAL checkpoint thread failed'));
  worker.on('exit', (code) => {
    if (!closing) fallBack(new Error(`exit code ${code}`), 'the WAL checkpoint thread stopped');
  });

  const ask = (): Promise<Reply> =>
    new Promise<Reply>((resolve, reject) => {
      if (stopped) return reject(new Error('the WAL checkpoint thread is stopped'));
      waiting = { resolve, reject };
      worker.postMessage('checkpoint');
    });
  const checked = (r: Reply): void => {
    if (!r.ok) throw new Error(r.message);
  };

  async function runCycle(): Promise<void> {
    dirty = false;
    try {
      const bulk = await ask();
      checked(bulk);
      // A WAL the first pass copied whole starts over at the next write; one past SQLite's own
      // checkpoint size (a gateway busy writing all along) gets the pass that holds the handle.
      if (bulk.ok && bulk.log >= SQLITE_AUTOCHECKPOINT_PAGES) checked(await main.exclusive(ask));
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
      await cycle;
      if (stopped) return;
      stopped = true;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      // Referenced again, so a process that awaits close() stays alive until the thread is gone.
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}
