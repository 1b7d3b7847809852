/**
 * `tollgate demo`: against a gateway in sandbox mode, fund a fresh wallet on each
 * chain from the faucet, buy one request on each, and print every step.
 */
import { type AcceptOption, type Chain, decodePaymentReceipt } from '@tollgate/protocol';
import { payFetch } from '../../pay-fetch.ts';
import { newSolanaKey, newSuiKey, type PaymentWallet, solanaWallet } from '../../wallets/index.ts';
import { suiWallet } from '../../wallets/sui.ts';
import { type CliCommand, CliError, type CliIo, wantsJson } from '../command.ts';
import { sandboxGateway } from '../sandbox-gateway.ts';

interface SandboxInfo {
  solana: { rpcUrl: string };
  sui: { rpcUrl: string };
}

async function json<T>(res: Response): Promise<T> {
  const body = (await res.json()) as T & { error?: string; message?: string };
  if (!res.ok) throw new CliError(`${body.error ?? res.status}: ${body.message ?? ''}`);
  return body;
}

async function buyOnce(
  io: CliIo,
  gateway: string,
  chain: Chain,
  wallet: PaymentWallet,
  path: string,
): Promise<{ chain: Chain; payer: string; txHashOrDigest: string | null; status: number }> {
  let txHashOrDigest: string | null = null;
  const balance = async (address: string) =>
    (
      await json<{ usdc: string }>(
        await fetch(`${gateway}/sandbox/balances?chain=${chain}&address=${address}`),
      )
    ).usdc;
  let option: AcceptOption | null = null;
  let before: Record<string, string> = {};
  const pay = payFetch(fetch, {
    wallets: [wallet],
    maxPerRequest: '1',
    onEvent(e) {
      if (e.type === 'challenge') {
        io.out(
          `  1. GET ${path} → 402 Payment Required (${e.requirement.scheme}, expires ${e.requirement.expiresAt})`,
        );
        for (const a of e.requirement.accepts) {
          io.out(
            `       ${a.chain}: ${a.totalAmount} USDC = ${a.splits.map((s) => `${s.amount} → ${s.recipientType}`).join(' + ')}`,
          );
        }
      }
      if (e.type === 'paying') option = e.option;
      if (e.type === 'paid') {
        txHashOrDigest = e.txHashOrDigest;
        io.out(`  2. paid ${e.option.totalAmount} USDC on ${chain} in one transaction: ${e.txHashOrDigest}`);
      }
      if (e.type === 'retry') io.out(`     (retry ${e.attempt}: ${e.reason})`);
    },
  });
  // Balances of the recipients before: learn them from an unpaid request first.
  const probe = await fetch(`${gateway}${path}`);
  if (probe.status === 402) {
    const req = (await probe.json()) as { accepts: AcceptOption[] };
    const mine = req.accepts.find((a) => a.chain === chain);
    for (const s of mine?.splits ?? []) before[s.payTo] = await balance(s.payTo);
  }
  const res = await pay(`${gateway}${path}`);
  io.out(`  3. retried with X-PAYMENT → HTTP ${res.status}`);
  io.out(`  4. response: ${await res.text()}`);
  const receipt = res.headers.get('x-payment-response');
  if (receipt) {
    const r = decodePaymentReceipt(receipt);
    io.out(
      `  5. receipt (X-PAYMENT-RESPONSE): success=${r.success} chain=${r.chain} tx=${r.txHashOrDigest} payer=${r.payer}`,
    );
  }
  const paid = option as AcceptOption | null;
  for (const s of paid?.splits ?? []) {
    io.out(`  6. ${s.recipientType} ${s.payTo}: ${before[s.payTo] ?? '?'} → ${await balance(s.payTo)} USDC`);
  }
  before = {};
  if (!res.ok) throw new CliError(`the paid request failed with HTTP ${res.status}`);
  return { chain, payer: wallet.address, txHashOrDigest, status: res.status };
}

const demo: CliCommand = {
  name: 'demo',
  summary: 'buy one request on each sandbox chain and print every step (sandbox mode only)',
  usage: '[--gateway <url>] [--path /p/demo/weather?city=Oslo]',
  details:
    'Without --gateway: $TOLLGATE_GATEWAY, then the URL `npm start` records in ./data/gateway-url\n' +
    '(so a sandbox on any PORT is found), then $PORT, then http://127.0.0.1:8402.',
  options: { path: { type: 'string' } },
  async run(cliIo, values) {
    // With --json the steps go to stderr and the purchases are the result.
    const io: CliIo = wantsJson(values) ? { ...cliIo, out: cliIo.err } : cliIo;
    const purchases: Awaited<ReturnType<typeof buyOnce>>[] = [];
    // Finds `npm start`'s sandbox on whatever PORT it runs (it records its URL in ./data).
    const found = sandboxGateway(
      io.env,
      typeof values['gateway'] === 'string' ? values['gateway'] : undefined,
    );
    const gateway = found.url;
    const path = typeof values['path'] === 'string' ? values['path'] : '/p/demo/weather?city=Oslo';
    let info: SandboxInfo;
    try {
      info = await json<SandboxInfo>(await fetch(`${gateway}/sandbox/info`));
    } catch (e) {
      throw new CliError(
        `no sandbox gateway at ${gateway} (from ${found.from}: ${(e as Error).message}); start one with \`npm start\``,
      );
    }
    for (const chain of ['solana', 'sui'] as const) {
      const key = chain === 'solana' ? newSolanaKey() : newSuiKey();
      io.out(`\n== ${chain} ==`);
      await json(
        await fetch(`${gateway}/sandbox/faucet`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ chain, address: key.address, amount: '1' }),
        }),
      );
      io.out(`  0. new wallet ${key.address}, funded with 1 USDC by the sandbox faucet`);
      const wallet =
        chain === 'solana'
          ? solanaWallet({
              secretKey: (key as ReturnType<typeof newSolanaKey>).secretKey,
              rpcUrl: info.solana.rpcUrl,
            })
          : suiWallet({
              secretKey: (key as ReturnType<typeof newSuiKey>).secretKey,
              rpcUrl: info.sui.rpcUrl,
            });
      purchases.push(await buyOnce(io, gateway, chain, wallet, path));
    }
    io.out('\nDone: one paid request on each chain.');
    return wantsJson(values) ? { gateway, path, purchases } : undefined;
  },
};

export const commands: CliCommand[] = [demo];
