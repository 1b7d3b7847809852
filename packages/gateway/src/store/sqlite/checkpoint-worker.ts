/**
 * The checkpointer's thread (checkpoints.ts): its own connection to the database file,
 * running a PASSIVE checkpoint each time it is asked, so the page copies and the disk syncs
 * of a checkpoint never run on the gateway's event loop. It answers every request, once.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

const port = parentPort;
if (!port) throw new Error('checkpoint-worker.ts runs as a worker thread');
const db = new DatabaseSync(String((workerData as { path: string }).path));
// The copies are synced before the WAL is reused (FULL is SQLite's default; said here on purpose).
db.exec('PRAGMA synchronous = FULL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

port.on('message', (message: unknown) => {
  if (message === 'close') {
    db.close();
    port.close();
    return;
  }
  try {
    const row = checkpoint.get() as { busy: number; log: number; checkpointed: number };
    port.postMessage({ ok: true, busy: row.busy === 1, log: row.log, checkpointed: row.checkpointed });
  } catch (err) {
    port.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
  }
});
port.postMessage({ ready: true });
