// `npm run bench:store`: the store's part of a paid request (store.ts), pinned to CPU 0 with
// the gateway's launch flags; the report goes to stderr.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { requireNode } from '../packages/gateway/bin/node-preflight.mjs';
import { NODE_LAUNCH_FLAGS } from '../packages/gateway/src/startup/v8-tuning.ts';

requireNode();
const script = fileURLToPath(new URL('./store.ts', import.meta.url));
const child = spawn(
  'taskset',
  ['-c', '0', process.execPath, ...NODE_LAUNCH_FLAGS, script, ...process.argv.slice(2)],
  {
    stdio: ['ignore', 'inherit', 'inherit'],
  },
);
child.once('error', (err) => {
  console.error(`bench:store: ${err.message} (needs taskset)`);
  process.exit(1);
});
child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
