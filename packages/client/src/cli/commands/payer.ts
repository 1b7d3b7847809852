/** Payer commands: `keygen`, `address`, `pay-option`, `pay`. */
import { readFileSync } from 'node:fs';
import { type Chain, parsePaymentRequirement, selectPaymentOption } from '@tollgate/protocol';
import { payFetch } from '../../pay-fetch.ts';
import {
  loadSolanaKeyFile,
  newSolanaKey,
  newSuiKey,
  type PaymentWallet,
  saveSolanaKeyFile,
  saveSuiKeyFile,
  solanaAddressOf,
  solanaWallet,
} from '../../wallets/index.ts';
import { loadSuiKeyFile, suiWallet } from '../../wallets/sui.ts';
import { type CliCommand, CliError, type ParsedValues, requireString, UsageError } from '../command.ts';

function chainOf(values: ParsedValues): Chain {
  const chain = requireString(values, 'chain');
  if (chain !== 'sui' && chain !== 'solana') throw new UsageError('--chain must be sui or solana');
  return chain;
}

/** A wallet from --chain, --key and --rpc (or the gateway's sandbox info when --rpc is absent). */
export async function walletFrom(
  values: ParsedValues,
  env: Record<string, string | undefined>,
): Promise<PaymentWallet> {
  const chain = chainOf(values);
  const keyPath = requireString(values, 'key');
  let rpcUrl =
    typeof values['rpc'] === 'string'
      ? values['rpc']
      : env[chain === 'sui' ? 'SUI_RPC_URL' : 'SOLANA_RPC_URL'];
  if (!rpcUrl) {
    const gateway =
      typeof values['gateway'] === 'string'
        ? values['gateway']
        : (env['TOLLGATE_GATEWAY'] ?? 'http://127.0.0.1:8402');
    const info = await fetch(`${gateway}/sandbox/info`)
      .then((r) => (r.ok ? r.json() : null))
      .catch(() => null);
    rpcUrl = (info as Record<Chain, { rpcUrl: string }> | null)?.[chain]?.rpcUrl;
    if (!rpcUrl) throw new UsageError(`--rpc is required (no sandbox gateway at ${gateway} to ask)`);
  }
  return chain === 'solana'
    ? solanaWallet({ secretKey: loadSolanaKeyFile(keyPath), rpcUrl })
    : suiWallet({ secretKey: loadSuiKeyFile(keyPath), rpcUrl });
}

const WALLET_OPTIONS = {
  chain: { type: 'string' },
  key: { type: 'string' },
  rpc: { type: 'string' },
} as const;

const keygen: CliCommand = {
  name: 'keygen',
  summary: 'create a new wallet key file (Solana CLI JSON / Sui suiprivkey format) and print its address',
  usage: '--chain sui|solana --out <file>',
  details: 'The file is created with mode 0600 and never overwritten.',
  options: { chain: { type: 'string' }, out: { type: 'string' } },
  async run(io, values) {
    const chain = chainOf(values);
    const out = requireString(values, 'out');
    try {
      if (chain === 'solana') {
        const key = newSolanaKey();
        saveSolanaKeyFile(out, key);
        io.out(key.address);
      } else {
        const key = newSuiKey();
        saveSuiKeyFile(out, key);
        io.out(key.address);
      }
    } catch (e) {
      throw new CliError(`cannot write ${out}: ${(e as Error).message}`);
    }
  },
};

const address: CliCommand = {
  name: 'address',
  summary: "print a key file's address",
  usage: '--chain sui|solana --key <file>',
  options: { chain: { type: 'string' }, key: { type: 'string' } },
  async run(io, values) {
    const chain = chainOf(values);
    const key = requireString(values, 'key');
    if (chain === 'solana') io.out(solanaAddressOf(loadSolanaKeyFile(key)));
    else {
      const { Ed25519Keypair } = await import('@mysten/sui/keypairs/ed25519');
      const secret = loadSuiKeyFile(key);
      io.out(
        typeof secret === 'string'
          ? Ed25519Keypair.fromSecretKey(secret).toSuiAddress()
          : secret.toSuiAddress(),
      );
    }
  },
};

const payOption: CliCommand = {
  name: 'pay-option',
  summary: "pay one accept option of a saved 402 body on-chain; prints the transaction's signature/digest",
  usage: '--chain sui|solana --key <file> --requirement <402-body.json> [--rpc <url>]',
  details:
    'One transaction pays every split and carries the memo. Build the X-PAYMENT proof from its output (docs/protocol.md).',
  options: { ...WALLET_OPTIONS, requirement: { type: 'string' } },
  async run(io, values) {
    let requirement: ReturnType<typeof parsePaymentRequirement>;
    try {
      requirement = parsePaymentRequirement(
        JSON.parse(readFileSync(requireString(values, 'requirement'), 'utf8')),
      );
    } catch (e) {
      throw new CliError(`not a 402 payment requirement: ${(e as Error).message}`);
    }
    const wallet = await walletFrom(values, io.env);
    io.out(await wallet.pay(selectPaymentOption(requirement, wallet.chain)));
  },
};

const pay: CliCommand = {
  name: 'pay',
  summary: 'request a URL, paying its 402 with your wallet, and print the response',
  usage: '--chain sui|solana --key <file> [--rpc <url>] [--method GET] [--data <body>] [--max <usdc>] <url>',
  details:
    'Progress goes to stderr, the response body to stdout. --max refuses to pay more than that (default 1 USDC).',
  options: {
    ...WALLET_OPTIONS,
    method: { type: 'string' },
    data: { type: 'string' },
    max: { type: 'string' },
  },
  positionals: true,
  async run(io, values, positionals) {
    const url = positionals[0];
    if (!url) throw new UsageError('the URL to request is required');
    const wallet = await walletFrom(values, io.env);
    const fetchPaid = payFetch(fetch, {
      wallets: [wallet],
      maxPerRequest: typeof values['max'] === 'string' ? values['max'] : '1',
      onEvent(e) {
        if (e.type === 'challenge')
          io.err(
            `402: ${e.requirement.description} — ${e.requirement.accepts.map((a) => `${a.totalAmount} USDC on ${a.chain}`).join(' or ')}`,
          );
        if (e.type === 'paid')
          io.err(`paid ${e.option.totalAmount} USDC on ${e.option.chain}: ${e.txHashOrDigest}`);
        if (e.type === 'retry') io.err(`retry ${e.attempt} (${e.reason}) in ${e.delayMs} ms`);
      },
    });
    const data = typeof values['data'] === 'string' ? values['data'] : undefined;
    const res = await fetchPaid(url, {
      method: typeof values['method'] === 'string' ? values['method'] : data ? 'POST' : 'GET',
      ...(data ? { body: data, headers: { 'content-type': 'application/json' } } : {}),
    });
    io.err(`HTTP ${res.status}`);
    const receipt = res.headers.get('x-payment-response');
    if (receipt) io.err(`receipt: ${Buffer.from(receipt, 'base64').toString('utf8')}`);
    io.out(await res.text());
    if (!res.ok) throw new CliError(`the request failed with HTTP ${res.status}`);
  },
};

export const commands: CliCommand[] = [keygen, address, payOption, pay];
