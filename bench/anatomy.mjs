// `npm run bench:anatomy`: where a 402's CPU goes (anatomy.ts), pinned to CPU 0 with the
// gateway's launch flags; its stdout (the gateway's access lines) goes to /dev/null and
// the report to stderr.
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { requireNode } from '../packages/gateway/bin/node-preflight.mjs';
import { NODE_LAUNCH_FLAGS } from '../packages/gateway/src/startup/v8-tuning.ts';

requireNode();
const script = fileURLToPath(new URL('./anatomy.ts', import.meta.url));
const child = spawn(
  'taskset',
  ['-c', '0', process.execPath, ...NODE_LAUNCH_FLAGS, '--expose-gc', script, ...process.argv.slice(2)],
  { stdio: ['ignore', openSync('/dev/null', 'w'), 'inherit'] },
);
child.once('error', (err) => {
  console.error(`bench:anatomy: ${err.message} (needs taskset)`);
  process.exit(1);
});
child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
// A signal to this wrapper reaches the measuring process, which stops its own children.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
