/** Small helpers for driving the x402 flow by hand in tests. */
import type { PaymentWallet } from '@tollgate/client';
import {
  type AcceptOption,
  buildPaymentProof,
  encodePaymentProof,
  formatAmount,
  type PaymentRequirement,
  parseAmount,
  selectPaymentOption,
} from '@tollgate/protocol';

export async function challenge(
  url: string,
  init: RequestInit = {},
): Promise<{ res: Response; requirement: PaymentRequirement }> {
  const res = await fetch(url, init);
  if (res.status !== 402) throw new Error(`expected 402, got ${res.status}: ${await res.text()}`);
  return { res, requirement: (await res.json()) as PaymentRequirement };
}

/** Pays the wallet's option (optionally altered first) and returns the X-PAYMENT header. */
export async function payFor(
  wallet: PaymentWallet,
  requirement: PaymentRequirement,
  alter: (o: AcceptOption) => AcceptOption = (o) => o,
): Promise<{ header: string; tx: string; option: AcceptOption }> {
  const option = selectPaymentOption(requirement, wallet.chain);
  // An altered option stays self-consistent (wallets refuse splits that don't add up).
  const altered = alter(option);
  const total = altered.splits.reduce((sum, s) => sum + parseAmount(s.amount, altered.decimals), 0n);
  const tx = await wallet.pay({ ...altered, totalAmount: formatAmount(total, altered.decimals) });
  const header = encodePaymentProof(
    buildPaymentProof(requirement, option, { payer: wallet.address, txHashOrDigest: tx }),
  );
  return { header, tx, option };
}

export function withPayment(init: RequestInit, header: string): RequestInit {
  return {
    ...init,
    headers: { ...(init.headers as Record<string, string> | undefined), 'x-payment': header },
  };
}
