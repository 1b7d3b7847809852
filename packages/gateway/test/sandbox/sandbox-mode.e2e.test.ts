/**
 * `npm start` with no configuration, as a newcomer runs it: sandbox mode comes up, and
 * the README's stock x402 client example (examples/stock-x402-client.mjs) buys from it
 * with USDC and no SOL.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, type SandboxProcess, startSandboxProcess } from '../support/sandbox-process.ts';

const EXAMPLE = join(ROOT, 'examples/stock-x402-client.mjs');

let sandbox: SandboxProcess;
let base: string;

beforeAll(async () => {
  sandbox = await startSandboxProcess();
  base = sandbox.base;
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('sandbox mode', () => {
  it('sells the demo API to the README stock x402 client, which holds no SOL', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE], {
      env: { ...process.env, TOLLGATE_URL: base },
      cwd: ROOT,
      timeout: 30_000,
    });
    expect(stdout).toMatch(/^200 paid \{/);
    expect(stdout).toContain('Oslo');
  });

  it('reports the x402 v2 sponsor in /readyz', async () => {
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { sponsor?: { state: string; lamports: string | null } };
    expect(body.sponsor?.state).toBe('ok');
    expect(BigInt(body.sponsor?.lamports ?? '0')).toBeGreaterThan(0n);
  });
});
