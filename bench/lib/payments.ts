/**
 * Real payments for the paid scenario, made before the timed runs: for each one,
 * a 402 from the gateway, a Solana transaction on the sandbox chain paid by the
 * client's `solanaWallet` (every split, the memo), and the X-PAYMENT proof built
 * with the protocol package. Each proof is used exactly once by the load generator.
 */
import { createWriteStream } from 'node:fs';
import { newSolanaKey, type PaymentWallet, solanaWallet } from '@tollgate/client';
import {
  buildPaymentProof,
  encodePaymentProof,
  type PaymentRequirement,
  parseAmount,
  selectPaymentOption,
} from '@tollgate/protocol';

export interface PaymentPlan {
  /** The paid route, e.g. http://127.0.0.1:1234/p/bench/paid */
  url: string;
  solanaRpcUrl: string;
  faucetUrl: string;
  count: number;
  /** One header value per line is written here. */
  file: string;
  payers?: number;
  concurrency?: number;
  /** Stop starting payments after this many seconds (the proofs made so far are kept). */
  budgetS?: number;
  onProgress?: (done: number) => void;
}

async function fund(faucetUrl: string, owner: string, usdcAtomic: bigint): Promise<void> {
  const res = await fetch(`${faucetUrl}/faucet`, {
    method: 'POST',
    body: JSON.stringify({ chain: 'solana', owner, usdcAtomic: usdcAtomic.toString() }),
  });
  if (!res.ok) throw new Error(`faucet refused: ${res.status} ${await res.text()}`);
}

async function challenge(url: string): Promise<PaymentRequirement> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 402)
    throw new Error(`expected a 402 from ${url}, got ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as PaymentRequirement;
}

/** Makes up to `count` payments and writes their proofs; returns how many and how fast. */
export async function preparePayments(
  plan: PaymentPlan,
): Promise<{ made: number; perSecond: number; seconds: number }> {
  if (plan.count <= 0) return { made: 0, perSecond: 0, seconds: 0 };
  const payers = plan.payers ?? 8;
  const concurrency = plan.concurrency ?? 32;
  const first = await challenge(plan.url);
  const total = parseAmount(selectPaymentOption(first, 'solana').totalAmount, 6);
  // Enough for every payment, spread over the payers, plus slack.
  const each = (total * BigInt(Math.ceil(plan.count / payers) + 10) * 11n) / 10n;
  const wallets: PaymentWallet[] = [];
  for (let i = 0; i < payers; i++) {
    const key = newSolanaKey();
    await fund(plan.faucetUrl, key.address, each);
    wallets.push(solanaWallet({ secretKey: key.secretKey, rpcUrl: plan.solanaRpcUrl, pollIntervalMs: 50 }));
  }

  const out = createWriteStream(plan.file);
  const started = performance.now();
  const deadline = started + (plan.budgetS ?? Number.POSITIVE_INFINITY) * 1000;
  let next = 0;
  let done = 0;
  async function worker(w: number): Promise<void> {
    const wallet = wallets[w % payers]!;
    while (next < plan.count && performance.now() < deadline) {
      next++;
      const requirement = await challenge(plan.url);
      const option = selectPaymentOption(requirement, 'solana');
      const tx = await wallet.pay(option);
      const header = encodePaymentProof(
        buildPaymentProof(requirement, option, { payer: wallet.address, txHashOrDigest: tx }),
      );
      out.write(`${header}\n`);
      done++;
      if (done % 1000 === 0) plan.onProgress?.(done);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i)));
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  const seconds = (performance.now() - started) / 1000;
  return { made: done, perSecond: done / seconds, seconds };
}
