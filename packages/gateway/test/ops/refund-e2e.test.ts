/**
 * Refunds end to end (issue 13): a real gateway whose upstream keeps failing takes a
 * real payment on each chain and never delivers; past TOLLGATE_UNDELIVERED_AFTER_SEC the
 * operator's command (a child process, as `npm run refund` runs it, on the gateway's
 * database) lists it and pays the payer back the gross on-chain; the payment then
 * shows refunded, the same proof gets 409 payment_refunded without reaching the
 * upstream, and running the command again pays nothing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { payFetch, retryWithProof, UndeliveredPaymentError } from '@tollgate/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvInput } from '../../src/config.ts';
import { refundCommand } from '../../src/ops/refund-command.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { sandboxPlatformWallets } from '../support/platform-wallets.ts';

const CLI = new URL('../../src/ops/cli.ts', import.meta.url).pathname;

let h: Harness;
let dir: string;
let env: EnvInput;

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function refund(args: string[]): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, 'refund', ...args],
      { env: { PATH: process.env['PATH'] ?? '', ...env } as NodeJS.ProcessEnv, timeout: 60_000 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

interface Listed {
  id: string;
  chain: string;
  payer: string;
  amountAtomic: string;
  project: string | null;
  status: string;
  ageSec: number;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-refund-e2e-'));
  const databaseUrl = `sqlite:${join(dir, 'tollgate.db')}`;
  h = await startHarness({ databaseUrl, env: { TOLLGATE_UNDELIVERED_AFTER_SEC: '1' } });
  // The operator's platform wallets, where sandbox mode keeps them; funded to pay refunds from.
  await sandboxPlatformWallets(dir, h.chains, 100_000_000n);
  env = {
    TOLLGATE_NETWORK: 'sandbox',
    TOLLGATE_DATA_DIR: dir,
    DATABASE_URL: databaseUrl,
    SOLANA_RPC_URL: h.chains.solana.url,
    SUI_RPC_URL: h.chains.sui.url,
    TOLLGATE_UNDELIVERED_AFTER_SEC: '1',
    LOG_LEVEL: 'silent',
  };
}, 60_000);

afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('refunding an undelivered payment', () => {
  it.each(['solana', 'sui'] as const)(
    '%s: pays the payer back the gross on-chain, once, and the proof is refused afterwards',
    async (chain) => {
      const wallet = await h.newPayer(chain, '1');
      const before = await h.chains[chain].usdcBalance(wallet.address);
      const url = `${h.baseUrl}/p/${h.project.slug}/orders/new?refund=${chain}`;
      h.upstream.mode = 'fail500';
      const pay = payFetch(fetch, { wallets: [wallet], maxRetries: 1, maxRetryDelayMs: 50 });
      const err = await pay(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"sku":"refund-me"}',
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UndeliveredPaymentError);
      const { request } = err as UndeliveredPaymentError;
      // 0.02 + the 10% fee, paid on-chain: 0.02 to the provider, 0.002 to the platform.
      expect(await h.chains[chain].usdcBalance(wallet.address)).toBe(before - 22_000n);
      const upstreamCalls = h.upstream.calls('/base/orders/new').length;

      // Past the undelivered window (1 s here).
      await new Promise((r) => setTimeout(r, 1_200));
      const listed = await refund(['--list', '--chain', chain, '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      const payments = (JSON.parse(listed.stdout) as { payments: Listed[] }).payments;
      const mine = payments.find((p) => p.payer === wallet.address);
      expect(mine).toMatchObject({
        chain,
        amountAtomic: '22000',
        project: h.project.slug,
        status: 'undelivered',
      });
      expect(mine!.ageSec).toBeGreaterThanOrEqual(1);
      const printed = await refund(['--list']);
      expect(printed.stdout).toContain(mine!.id);
      expect(printed.stdout).toContain('0.022');

      const refunded = await refund(['--all', '--chain', chain, '--json']);
      expect(refunded.code, refunded.stderr + refunded.stdout).toBe(0);
      const report = JSON.parse(refunded.stdout);
      expect(report).toMatchObject({ ok: true, refunded: 1, totalRefundedAtomic: '22000', errors: [] });
      expect(report.lines).toMatchObject([
        {
          redemptionId: mine!.id,
          payer: wallet.address,
          amountAtomic: '22000',
          state: 'refunded',
          providerKept: '0.02',
        },
      ]);
      expect(await h.chains[chain].usdcBalance(wallet.address)).toBe(before);

      const row = await h.store.refunds.candidate(mine!.id);
      expect(row?.refundState).toBe('refunded');
      expect(await h.store.refunds.byRedemption(mine!.id)).toMatchObject({
        state: 'refunded',
        recipient: wallet.address,
        amount: 22_000n,
        tx: report.lines[0].tx,
      });

      // The same proof, even once the upstream works again: refused, the upstream never called.
      h.upstream.mode = 'ok';
      const retry = await retryWithProof(fetch, request, { maxRetries: 0 });
      expect(retry.status).toBe(409);
      expect(await retry.json()).toMatchObject({ error: 'conflict', reason: 'payment_refunded' });
      expect(h.upstream.calls('/base/orders/new')).toHaveLength(upstreamCalls);

      const again = await refund(['--all', '--chain', chain]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('nothing to refund');
      const byId = await refund(['--id', mine!.id]);
      expect(byId.code, byId.stderr).toBe(0);
      expect(byId.stdout).toContain('refunded earlier');
      expect(await h.chains[chain].usdcBalance(wallet.address)).toBe(before);
    },
    150_000,
  );

  it('refuses bad usage with exit 2', async () => {
    // In-process: the same entry the CLI calls, without a process start per case.
    const usage = async (args: string[]) => {
      const err: string[] = [];
      const code = await refundCommand(args, env, { out: () => {}, err: (t) => void err.push(t) });
      return { code, err: err.join('') };
    };
    expect((await usage([])).code).toBe(2);
    expect((await usage(['--all', '--list'])).code).toBe(2);
    expect((await usage(['--all', '--chain', 'bitcoin'])).code).toBe(2);
    expect((await usage(['--list', '--dry-run'])).code).toBe(2);
    const bad = await usage(['--id', "rdm_x'; drop table refunds"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('usage: npm run refund');
  });
});
