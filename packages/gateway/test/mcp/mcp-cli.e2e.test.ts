/**
 * `tollgate mcp tools` and `tollgate mcp call` against the real gateway on the sandbox
 * chains: the tools with their prices; a paid call that prints the tool's answer and
 * moves exactly the price; a call over the cap that pays nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { saveSolanaKeyFile } from '@tollgate/client';
import { newSolanaKey } from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../client/src/cli/run.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

let h: Harness;
let dir: string;

beforeAll(async () => {
  h = await startHarness();
  dir = mkdtempSync(join(tmpdir(), 'tollgate-mcp-cli-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function tollgate(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    env: { TOLLGATE_CONFIG_DIR: join(dir, 'config') },
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

async function fundedKeyFile(): Promise<{ path: string; address: string }> {
  const key = newSolanaKey();
  await h.chains.solana.faucet(key.address, 1_000_000n);
  const path = join(dir, `${key.address}.json`);
  saveSolanaKeyFile(path, key);
  return { path, address: key.address };
}

describe('tollgate mcp', () => {
  it('tools: one line per tool with its price', async () => {
    const r = await tollgate('mcp', 'tools', '--gateway', h.baseUrl);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${h.project.slug}__get_items  0.011 USDC`);
    expect(r.stdout).toMatch(/^chat {2}priced per call$/m);
    const json = await tollgate(
      'mcp',
      'tools',
      '--gateway',
      h.baseUrl,
      '--project',
      h.project.slug,
      '--json',
    );
    expect(JSON.parse(json.stdout).map((t: { name: string }) => t.name)).toContain(
      `${h.project.slug}__post_orders_new`,
    );
  });

  it('call: pays the tool with the wallet, prints its answer and the receipt', async () => {
    const payer = await fundedKeyFile();
    const calls = h.upstream.calls('/base/items').length;
    const r = await tollgate(
      'mcp',
      'call',
      `${h.project.slug}__get_items`,
      '--args',
      '{"query":{"city":"Oslo"}}',
      '--chain',
      'solana',
      '--key',
      payer.path,
      '--rpc',
      h.chains.solana.url,
      '--gateway',
      h.baseUrl,
    );
    expect(r.stderr).toMatch(/paid 0\.011 USDC on solana/);
    expect(r.stderr).toContain('"success":true');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true });
    expect(h.upstream.calls('/base/items').length).toBe(calls + 1);
    expect(await h.chains.solana.usdcBalance(payer.address)).toBe(1_000_000n - 11_000n);
  });

  it('call: refuses a price over --max and pays nothing', async () => {
    const payer = await fundedKeyFile();
    const r = await tollgate(
      'mcp',
      'call',
      `${h.project.slug}__get_items`,
      '--max',
      '0.001',
      '--chain',
      'solana',
      '--key',
      payer.path,
      '--rpc',
      h.chains.solana.url,
      '--gateway',
      h.baseUrl,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/exceeds the per-request limit 0\.001 USDC/);
    expect(await h.chains.solana.usdcBalance(payer.address)).toBe(1_000_000n);
  });
});
