// `npm run bench:anatomy`: where a 402's CPU goes (anatomy.ts), pinned to CPU 0 with the
// gateway's launch flags; its stdout (the gateway's access lines) goes to /dev/null and
// the report to stderr.
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireNode } from '../packages/gateway/bin/node-preflight.mjs';
import { NODE_LAUNCH_FLAGS } from '../packages/gateway/src/startup/v8-tuning.ts';
import { ensureTools } from './lib/tools.ts';

requireNode();
const script = fileURLToPath(new URL('./anatomy.ts', import.meta.url));
const args = process.argv.slice(2);
// --instructions: under callgrind, its instrumentation off until anatomy.ts turns it on
// (callgrind_control) around the stub 402s it counts; its dumps go to the directory named.
const instructions = args.includes('--instructions');
if (instructions) ensureTools(['valgrind', 'callgrind_control']);
const callgrindDir = instructions ? mkdtempSync(join(tmpdir(), 'tollgate-callgrind-')) : '';
const valgrind = instructions
  ? [
      'valgrind',
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${join(callgrindDir, 'callgrind.out')}`,
    ]
  : [];
const child = spawn(
  'taskset',
  ['-c', '0', ...valgrind, process.execPath, ...NODE_LAUNCH_FLAGS, '--expose-gc', script, ...args],
  {
    stdio: ['ignore', openSync('/dev/null', 'w'), 'inherit'],
    env: instructions ? { ...process.env, ANATOMY_CALLGRIND_DIR: callgrindDir } : process.env,
  },
);
child.once('error', (err) => {
  console.error(`bench:anatomy: ${err.message} (needs taskset${instructions ? ' and valgrind' : ''})`);
  process.exit(1);
});
child.once('exit', (code, signal) => {
  if (callgrindDir) rmSync(callgrindDir, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
// A signal to this wrapper reaches the measuring process, which stops its own children.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
