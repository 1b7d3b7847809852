/**
 * `tollgate pay` keeps a paid but undelivered request on disk when its retries give up,
 * and `tollgate retry <file>` sends it again with the same proof, paying nothing.
 * The wallet pays on the real sandbox chain; the gateway is a scripted stand-in.
 */

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decodePaymentProof,
  encodePaymentReceipt,
  memoForNonce,
  type PaymentRequirement,
  USDC_SOLANA_MINT,
} from '@tollgate/protocol';
import { newSolanaKey, type SolanaSandbox, startSolanaSandbox } from '@tollgate/sandbox';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { saveSolanaKeyFile } from '../wallets/keyfiles.ts';
import { runCli } from './run.ts';

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
  payment: string | undefined;
}

let chain: SolanaSandbox;
let gateway: Server;
let base: string;
let dir: string;
/** 'down': every paid request gets 502 retryable; 'refuse': a 402 with a reason; 'up': 200 with a receipt. */
let mode: 'down' | 'refuse' | 'up';
let seen: Seen[];
const provider = newSolanaKey().address;

function requirement(): PaymentRequirement {
  const nonce = crypto.randomUUID().replaceAll('-', '');
  return {
    error: 'payment_required',
    x402Version: 1,
    scheme: 'exact_split',
    resource: 'POST /p/shop/orders',
    description: 'orders',
    expiresAt: new Date(Date.now() + 300_000).toISOString(),
    nonce,
    requestHash: 'b'.repeat(64),
    paymentRequirementId: 'r1.k.p.m',
    accepts: [
      {
        chain: 'solana',
        network: 'localnet',
        asset: 'USDC',
        totalAmount: '0.02',
        decimals: 6,
        mint: USDC_SOLANA_MINT,
        memo: memoForNonce(nonce),
        splits: [{ recipientType: 'provider', payTo: provider, amount: '0.02' }],
      },
    ],
  };
}

beforeAll(async () => {
  chain = await startSolanaSandbox();
  gateway = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const payment = req.headers['x-payment'] as string | undefined;
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        contentType: req.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
        payment,
      });
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      if (!payment) return send(402, requirement());
      if (mode === 'down') {
        return send(
          502,
          { error: 'upstream_error', message: 'the upstream answered 500', retryable: true },
          { 'retry-after': '0' },
        );
      }
      if (mode === 'refuse') return send(402, { ...requirement(), reason: 'transaction_too_late' });
      const proof = decodePaymentProof(payment);
      const receipt = encodePaymentReceipt({
        success: true,
        chain: proof.chain,
        network: proof.network,
        txHashOrDigest: proof.txHashOrDigest,
        payer: proof.payer,
        paymentRequirementId: proof.paymentRequirementId,
      });
      send(200, { ordered: true }, { 'x-payment-response': receipt });
    });
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'tollgate-pay-retry-'));
});
afterAll(async () => {
  await chain?.close();
  await new Promise((resolve) => gateway?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  seen = [];
  mode = 'up';
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
  await chain.faucet(key.address, 1_000_000n);
  const path = join(dir, `${key.address}.json`);
  saveSolanaKeyFile(path, key);
  return { path, address: key.address };
}

describe('tollgate pay, when the paid retries give up', () => {
  it('saves the request and its proof (mode 0600), prints the path, and `tollgate retry` delivers it without paying', async () => {
    const payer = await fundedKeyFile();
    mode = 'down';
    const url = `${base}/p/shop/orders?ref=a%20b`;
    const pay = await tollgate(
      'pay',
      '--chain',
      'solana',
      '--key',
      payer.path,
      '--rpc',
      chain.url,
      '--data',
      '{"sku":"äpple"}',
      url,
    );
    expect(pay.code).toBe(1);
    const path = /saved the request and its payment proof to (\S+)/.exec(pay.stderr)?.[1];
    expect(path).toBeDefined();
    expect(path!.startsWith(join(dir, 'config', 'payments'))).toBe(true);
    expect(pay.stderr).toContain(`tollgate retry ${path}`);
    expect(statSync(path!).mode & 0o777).toBe(0o600);
    const paidRequests = seen.filter((r) => r.payment);
    expect(paidRequests).toHaveLength(9); // the paid request and 8 retries, one proof
    expect(new Set(paidRequests.map((r) => r.payment)).size).toBe(1);
    const saved = JSON.parse(readFileSync(path!, 'utf8'));
    expect(saved).toMatchObject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payment: paidRequests[0]!.payment,
      chain: 'solana',
    });
    expect(Buffer.from(saved.bodyBase64, 'base64').toString('utf8')).toBe('{"sku":"äpple"}');
    expect(await chain.usdcBalance(payer.address)).toBe(980_000n);

    mode = 'up';
    seen = [];
    const retry = await tollgate('retry', path!);
    expect(retry.code).toBe(0);
    expect(JSON.parse(retry.stdout)).toEqual({ ordered: true });
    expect(retry.stderr).toContain('receipt:');
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/p/shop/orders?ref=a%20b',
        contentType: 'application/json',
        body: '{"sku":"äpple"}',
        payment: paidRequests[0]!.payment,
      },
    ]);
    expect(await chain.usdcBalance(payer.address)).toBe(980_000n);
  });

  it('writes the proof where --proof-file says, and `tollgate retry` gives up again without paying', async () => {
    const payer = await fundedKeyFile();
    mode = 'down';
    const file = join(dir, 'kept.json');
    const pay = await tollgate(
      'pay',
      '--chain',
      'solana',
      '--key',
      payer.path,
      '--rpc',
      chain.url,
      '--max-retries',
      '1',
      '--proof-file',
      file,
      `${base}/p/shop/orders`,
    );
    expect(pay.code).toBe(1);
    expect(pay.stderr).toContain(`saved the request and its payment proof to ${file}`);
    const retry = await tollgate('retry', '--max-retries', '0', file);
    expect(retry.code).toBe(1);
    expect(retry.stderr).toMatch(/not delivered .*upstream_error/);
    expect(retry.stderr).toContain(`${file} is kept`);
    expect(await chain.usdcBalance(payer.address)).toBe(980_000n);
  });

  it('keeps the proof too when the gateway refuses it after the money moved', async () => {
    const payer = await fundedKeyFile();
    mode = 'refuse';
    const pay = await tollgate(
      'pay',
      '--chain',
      'solana',
      '--key',
      payer.path,
      '--rpc',
      chain.url,
      `${base}/p/x`,
    );
    expect(pay.code).toBe(1);
    expect(seen.filter((r) => r.payment)).toHaveLength(1);
    const path = /saved the request and its payment proof to (\S+)/.exec(pay.stderr)?.[1];
    expect(JSON.parse(readFileSync(path!, 'utf8'))).toMatchObject({
      method: 'GET',
      note: expect.stringContaining('transaction_too_late'),
      payment: seen[1]!.payment,
    });
  });

  it('refuses a file that is not a saved payment', async () => {
    const file = join(dir, 'not-a-payment.json');
    writeFileSync(file, JSON.stringify({ method: 'GET', url: 'http://x' }));
    const retry = await tollgate('retry', file);
    expect(retry.code).toBe(1);
    expect(retry.stderr).toMatch(/not a payment saved by `tollgate pay`/);
    expect(seen).toHaveLength(0);
  });

  it('explains itself with --help', async () => {
    const help = await tollgate('retry', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage: tollgate retry \[--max-retries <n>\] <file>/);
    expect((await tollgate('pay', '--help')).stdout).toMatch(/--proof-file/);
  });
});
