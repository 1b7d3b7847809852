/**
 * payFetch asks the wallet's node which network it is on before paying, against the
 * real sandbox chains: one reporting its own identity, one started with mainnet's
 * (Solana genesis hash, Sui chain id). A node on the wrong network pays nothing.
 */
import type { AcceptOption, Chain, PaymentRequirement } from '@tollgate/protocol';
import {
  decodePaymentProof,
  memoForNonce,
  SOLANA_MAINNET_GENESIS_HASH,
  SUI_MAINNET_CHAIN_ID,
  USDC_SOLANA_MINT,
  USDC_SUI_COIN_TYPE,
} from '@tollgate/protocol';
import {
  newSolanaKey,
  newSuiKey,
  type SolanaSandbox,
  type SuiSandbox,
  startSolanaSandbox,
  startSuiSandbox,
} from '@tollgate/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payFetch } from './pay-fetch.ts';
import { solanaWallet } from './wallets/solana.ts';
import { suiWallet } from './wallets/sui.ts';
import type { PaymentWallet } from './wallets/wallet.ts';

type Identity = 'mainnet' | 'localnet';
let solana: Record<Identity, SolanaSandbox>;
let sui: Record<Identity, SuiSandbox>;

beforeAll(async () => {
  const [sl, sm, ul, um] = await Promise.all([
    startSolanaSandbox(),
    startSolanaSandbox({ genesisHash: SOLANA_MAINNET_GENESIS_HASH }),
    startSuiSandbox(),
    startSuiSandbox({ chainId: SUI_MAINNET_CHAIN_ID }),
  ]);
  solana = { localnet: sl, mainnet: sm };
  sui = { localnet: ul, mainnet: um };
});
afterAll(async () => {
  await Promise.all([solana?.localnet, solana?.mainnet, sui?.localnet, sui?.mainnet].map((c) => c?.close()));
});

const PRICE = 10_000n; // 0.01 USDC

/** A funded payer whose wallet talks to the sandbox chain with the given identity. */
async function payer(chain: Chain, node: Identity): Promise<PaymentWallet> {
  if (chain === 'solana') {
    const key = newSolanaKey();
    await solana[node].faucet(key.address, 1_000_000n);
    return solanaWallet({ secretKey: key.secretKey, rpcUrl: solana[node].url, pollIntervalMs: 20 });
  }
  const key = newSuiKey();
  sui[node].faucet(key.address, 1_000_000n);
  return suiWallet({ secretKey: key.secretKey, rpcUrl: sui[node].url });
}

const balance = (chain: Chain, node: Identity, address: string) =>
  chain === 'solana' ? solana[node].usdcBalance(address) : sui[node].usdcBalance(address);

function option(chain: Chain, network: string, nonce: string): AcceptOption {
  const payTo = chain === 'solana' ? newSolanaKey().address : newSuiKey().address;
  return {
    chain,
    network,
    asset: 'USDC',
    totalAmount: '0.01',
    decimals: 6,
    ...(chain === 'solana' ? { mint: USDC_SOLANA_MINT } : { coinType: USDC_SUI_COIN_TYPE }),
    memo: memoForNonce(nonce),
    splits: [{ recipientType: 'provider', payTo, amount: '0.01' }],
  };
}

function requirement(accepts: [Chain, string][]): PaymentRequirement {
  const nonce = crypto.randomUUID().replaceAll('-', '');
  return {
    error: 'payment_required',
    x402Version: 1,
    scheme: 'exact_split',
    resource: 'GET /p/demo/x',
    description: 'x',
    expiresAt: new Date(Date.now() + 300_000).toISOString(),
    nonce,
    requestHash: 'a'.repeat(64),
    paymentRequirementId: 'r1.k.p.m',
    accepts: accepts.map(([chain, network]) => option(chain, network, nonce)),
  };
}

/** A gateway stand-in: 402 with `req` until a request carries X-PAYMENT, then 200. */
function gateway(req: PaymentRequirement) {
  const payments: string[] = [];
  const fetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const payment = new Request(input, init).headers.get('x-payment');
    if (!payment) return Response.json(req, { status: 402 });
    payments.push(payment);
    return Response.json({ ok: true });
  };
  return { fetchImpl, payments };
}

describe.each<Chain>(['solana', 'sui'])('payFetch on %s checks the node network before paying', (chain) => {
  it.each<[string, Identity]>([
    ['mainnet', 'localnet'],
    ['localnet', 'mainnet'],
  ])('refuses a %s option when the node is %s, and pays nothing', async (network, node) => {
    const wallet = await payer(chain, node);
    const gw = gateway(requirement([[chain, network]]));
    const err = await payFetch(gw.fetchImpl, { wallets: [wallet] })('http://gw/p/demo/x').catch((e) => e);
    expect(err).toMatchObject({ code: 'network_mismatch' });
    expect(err.message).toContain(network);
    expect(gw.payments).toHaveLength(0);
    expect(await balance(chain, node, wallet.address)).toBe(1_000_000n);
  });

  it.each<Identity>(['mainnet', 'localnet'])('pays a %s option when the node is on it', async (net) => {
    const wallet = await payer(chain, net);
    const gw = gateway(requirement([[chain, net]]));
    const res = await payFetch(gw.fetchImpl, { wallets: [wallet] })('http://gw/p/demo/x');
    expect(res.status).toBe(200);
    expect(decodePaymentProof(gw.payments[0]).network).toBe(net);
    expect(await balance(chain, net, wallet.address)).toBe(1_000_000n - PRICE);
  });

  it('refuses in wallet.pay too, for callers that pay an option by hand', async () => {
    const wallet = await payer(chain, 'localnet');
    await expect(wallet.pay(option(chain, 'mainnet', 'by-hand'))).rejects.toMatchObject({
      code: 'network_mismatch',
    });
    expect(await balance(chain, 'localnet', wallet.address)).toBe(1_000_000n);
  });

  it('asks the node once per wallet: the identity is cached', async () => {
    const wallet = await payer(chain, 'localnet');
    const node = chain === 'solana' ? solana.localnet : sui.localnet;
    const first = await wallet.chainIdentity();
    expect(first).toBe(chain === 'solana' ? solana.localnet.genesisHash : sui.localnet.chainId);
    node.setFault('rpc_down');
    try {
      expect(await wallet.chainIdentity()).toBe(first);
    } finally {
      node.setFault('none');
    }
  });
});

describe('payFetch with wallets on several networks', () => {
  it('skips a wallet whose node is on the wrong network and pays with the next one', async () => {
    const wrong = await payer('solana', 'localnet');
    const right = await payer('sui', 'mainnet');
    const gw = gateway(
      requirement([
        ['solana', 'mainnet'],
        ['sui', 'mainnet'],
      ]),
    );
    const res = await payFetch(gw.fetchImpl, { wallets: [wrong, right] })('http://gw/p/demo/x');
    expect(res.status).toBe(200);
    expect(decodePaymentProof(gw.payments[0]).chain).toBe('sui');
    expect(await balance('solana', 'localnet', wrong.address)).toBe(1_000_000n);
    expect(await balance('sui', 'mainnet', right.address)).toBe(1_000_000n - PRICE);
  });
});
