/** Payer commands: `keygen`, `address`, `pay-option`, `pay`, `retry`. */
import { readFileSync } from 'node:fs';
import { decodePaymentReceipt, parsePaymentRequirement, selectPaymentOption } from '@tollgate/protocol';
import {
  type PaidRequest,
  type RetryEvent,
  retryWithProof,
  UndeliveredPaymentError,
} from '../../paid-retry.ts';
import { DEFAULT_MAX_PER_REQUEST, payFetch } from '../../pay-fetch.ts';
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
import { chainOf, nodeFor, readKeyFile } from '../chain-options.ts';
import {
  type CliCommand,
  CliError,
  type CliIo,
  optionalString,
  type ParsedValues,
  requireString,
  UsageError,
  wantsJson,
} from '../command.ts';
import { defaultSavePath, loadPaidRequest, savePaidRequest } from '../saved-payment.ts';

/**
 * A wallet from --chain, --key and --rpc (or, without --rpc, the node of the sandbox
 * gateway: --gateway, $TOLLGATE_GATEWAY, the origin of `url`, the last login).
 */
export async function walletFrom(
  values: ParsedValues,
  env: Record<string, string | undefined>,
  url?: string,
): Promise<PaymentWallet> {
  const chain = chainOf(values);
  const keyPath = requireString(values, 'key');
  const secret =
    chain === 'solana'
      ? readKeyFile(keyPath, loadSolanaKeyFile)
      : readKeyFile(keyPath, (p) => loadSuiKeyFile(p));
  const { rpcUrl } = await nodeFor(chain, values, env, url);
  return secret instanceof Uint8Array
    ? solanaWallet({ secretKey: secret, rpcUrl })
    : suiWallet({ secretKey: secret, rpcUrl });
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
  details:
    'The file is created with mode 0600 and never overwritten. Prints the address ({ chain, address, file } with --json).',
  options: { chain: { type: 'string' }, out: { type: 'string' } },
  async run(io, values) {
    const chain = chainOf(values);
    const out = requireString(values, 'out');
    let address: string;
    try {
      if (chain === 'solana') {
        const key = newSolanaKey();
        saveSolanaKeyFile(out, key);
        address = key.address;
      } else {
        const key = newSuiKey();
        saveSuiKeyFile(out, key);
        address = key.address;
      }
    } catch (e) {
      throw new CliError(`cannot write ${out}: ${(e as Error).message}`);
    }
    if (wantsJson(values)) return { chain, address, file: out };
    io.out(address);
    return undefined;
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
    const address =
      chain === 'solana'
        ? solanaAddressOf(readKeyFile(key, loadSolanaKeyFile))
        : readKeyFile(key, (p) => loadSuiKeyFile(p)).toSuiAddress();
    if (wantsJson(values)) return { chain, address };
    io.out(address);
    return undefined;
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
    const txHashOrDigest = await wallet.pay(selectPaymentOption(requirement, wallet.chain));
    if (wantsJson(values)) return { chain: wallet.chain, payer: wallet.address, txHashOrDigest };
    io.out(txHashOrDigest);
    return undefined;
  },
};

const onRetry = (io: CliIo) => (e: RetryEvent) =>
  io.err(`retry ${e.attempt} (${e.reason}) in ${e.delayMs} ms, same X-PAYMENT`);

/**
 * Prints a final answer: status and receipt on stderr, body on stdout; with --json one
 * document `{ status, receipt, body }` (the body parsed when it is JSON).
 */
async function printAnswer(io: CliIo, values: ParsedValues, res: Response): Promise<void> {
  io.err(`HTTP ${res.status}`);
  const receipt = res.headers.get('x-payment-response');
  if (receipt) io.err(`receipt: ${Buffer.from(receipt, 'base64').toString('utf8')}`);
  const text = await res.text();
  if (!wantsJson(values)) {
    io.out(text);
    return;
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the text as it is.
  }
  let decoded: unknown = null;
  try {
    decoded = receipt ? decodePaymentReceipt(receipt) : null;
  } catch {
    decoded = null;
  }
  io.out(JSON.stringify({ status: res.status, receipt: decoded, body }, null, 2));
}

/** Keeps a paid, undelivered request on disk and says how to send it again. */
function keep(io: CliIo, values: ParsedValues, paid: PaidRequest, note: string): string {
  const path = optionalString(values, 'proof-file') ?? defaultSavePath(io.env, paid);
  try {
    savePaidRequest(path, paid, note);
  } catch (e) {
    // The proof must not be lost: print it, since the file could not hold it.
    io.err(`cannot write ${path} (${(e as Error).message}); X-PAYMENT: ${paid.proof}`);
    throw new CliError(note);
  }
  io.err(`saved the request and its payment proof to ${path}`);
  return path;
}

function retriesFrom(values: ParsedValues): number | undefined {
  const v = optionalString(values, 'max-retries');
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError('--max-retries must be a whole number');
  return Number(v);
}

const pay: CliCommand = {
  name: 'pay',
  summary: 'request a URL, paying its 402 with your wallet, and print the response',
  usage:
    '--chain sui|solana --key <file> [--rpc <url>] [--method GET] [--data <body>] [--max <usdc>|none] [--max-retries <n>] [--proof-file <file>] <url>',
  details: [
    'Progress goes to stderr, the response body to stdout.',
    `--max refuses to pay more than that per request (default ${DEFAULT_MAX_PER_REQUEST} USDC; "none" lifts the cap).`,
    'Quotes that expire within 30 s are not paid (quote_expired), nor options on another network than',
    "the wallet's node (network_mismatch).",
    '',
    'If the payment went through but the request could not be delivered (the gateway kept answering',
    '"retry with the same X-PAYMENT", or could not be reached), the request and its proof are saved to',
    '--proof-file (default $TOLLGATE_CONFIG_DIR/payments/<time>-<tx>.json, mode 0600) and the path is',
    'printed: send it again later with `tollgate retry <file>`, which pays nothing.',
  ].join('\n'),
  options: {
    ...WALLET_OPTIONS,
    method: { type: 'string' },
    data: { type: 'string' },
    max: { type: 'string' },
    'max-retries': { type: 'string' },
    'proof-file': { type: 'string' },
  },
  positionals: true,
  async run(io, values, positionals) {
    const url = positionals[0];
    if (!url) throw new UsageError('the URL to request is required');
    const max = optionalString(values, 'max');
    const maxRetries = retriesFrom(values);
    const wallet = await walletFrom(values, io.env, url);
    let paid: { proof: string } | undefined;
    const fetchPaid = payFetch(fetch, {
      wallets: [wallet],
      maxPerRequest: max === 'none' ? null : (max ?? DEFAULT_MAX_PER_REQUEST),
      ...(maxRetries !== undefined ? { maxRetries } : {}),
      onEvent(e) {
        if (e.type === 'challenge')
          io.err(
            `402: ${e.requirement.description} — ${e.requirement.accepts.map((a) => `${a.totalAmount} USDC on ${a.chain}`).join(' or ')}`,
          );
        if (e.type === 'requote')
          io.err(`the quote expires at ${e.expiresAt}, too soon: asking for a fresh one`);
        if (e.type === 'paid') {
          paid = e;
          io.err(`paid ${e.option.totalAmount} USDC on ${e.option.chain}: ${e.txHashOrDigest}`);
        }
        if (e.type === 'retry') onRetry(io)(e);
      },
    });
    const data = typeof values['data'] === 'string' ? values['data'] : undefined;
    const init: RequestInit = {
      method: typeof values['method'] === 'string' ? values['method'] : data ? 'POST' : 'GET',
      ...(data ? { body: data, headers: { 'content-type': 'application/json' } } : {}),
    };
    let res: Response;
    try {
      res = await fetchPaid(url, init);
    } catch (e) {
      if (!(e instanceof UndeliveredPaymentError)) throw e;
      const path = keep(io, values, e.request, e.message);
      throw new CliError(`${e.message}\nsend it again with: tollgate retry ${path}`);
    }
    if (paid && res.status === 402) {
      // Money moved but the gateway refused the proof: keep the evidence with the request.
      const body = (await res
        .clone()
        .json()
        .catch(() => ({}))) as { reason?: string };
      const request = new Request(url, init);
      const headers = Object.fromEntries(request.headers);
      const bytes = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
      keep(
        io,
        values,
        { url: request.url, method: request.method, headers, body: bytes, proof: paid.proof },
        `the gateway refused the payment proof (${body.reason ?? 'no reason given'})`,
      );
    }
    await printAnswer(io, values, res);
    if (!res.ok) throw new CliError(`the request failed with HTTP ${res.status}`);
  },
};

const retry: CliCommand = {
  name: 'retry',
  summary: 'send a paid request saved by `tollgate pay` again, with the same payment proof (pays nothing)',
  usage: '[--max-retries <n>] <file>',
  details: [
    'The file (written by `tollgate pay` when its retries gave up) holds the method, URL, headers,',
    'body and X-PAYMENT value. The same request is sent with the same proof, and again while the',
    'gateway answers "retry with the same X-PAYMENT". A payment that was already delivered is',
    'answered with the stored response. The file is left in place.',
  ].join('\n'),
  options: { 'max-retries': { type: 'string' } },
  positionals: true,
  async run(io, values, positionals) {
    const file = positionals[0];
    if (!file) throw new UsageError('the saved payment file is required');
    const maxRetries = retriesFrom(values);
    const paid = loadPaidRequest(file);
    io.err(`${paid.method} ${paid.url} with the saved X-PAYMENT`);
    let res: Response;
    try {
      res = await retryWithProof(fetch, paid, {
        ...(maxRetries !== undefined ? { maxRetries } : {}),
        onEvent: onRetry(io),
      });
    } catch (e) {
      if (e instanceof UndeliveredPaymentError) throw new CliError(`${e.message}\n(${file} is kept)`);
      throw e;
    }
    await printAnswer(io, values, res);
    if (!res.ok) throw new CliError(`the request failed with HTTP ${res.status}`);
  },
};

export const commands: CliCommand[] = [keygen, address, payOption, pay, retry];
