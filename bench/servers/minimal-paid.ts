/**
 * The minimal paid server: the leanest reasonable Node server doing the paid path's work
 * (DESIGN §5: proof decode, token check, sandbox-chain lookup, durable atomic redemption,
 * forward), with none of the gateway's framework, catalogue, metrics or logging. It is the
 * paid scenario's second yardstick: the minimal forwarder shows what Node costs to forward,
 * this shows what the paid work itself costs on the same machine, so the gap between it and
 * the gateway is the gateway's own.
 *
 * Per request, as the gateway: the X-PAYMENT proof decoded (strict base64, JSON), the
 * requirement token's HMAC checked with the gateway's key (same secret, same derivation) and
 * the request bound to it (requestHash recomputed from the token's quote); `getTransaction`
 * over one keep-alive undici Pool, the transaction checked (succeeded, signed by the payer,
 * every split credited in USDC, the memo); the redemption claimed (INSERT, unique on the
 * transaction and on the nonce) and, after the upstream answered, completed with the stored
 * answer (UPDATE); both writes durable before the answer: group commit, one transaction and
 * one fdatasync of the WAL for the writes of all requests waiting (SQLite in WAL mode,
 * synchronous=NORMAL, so the automatic checkpoint syncs before it copies). A known delivered
 * transaction replays its stored answer.
 *
 * Not a product: no leases renewed, no retries, no refunds, one endpoint. Fewer indexes than
 * the gateway's table (only the two unique keys). `POST /__reset` empties its table between
 * runs, so the bench can hand it the same proofs again.
 *
 * With `BENCH_RECORD=tollgate` it keeps its redemptions in the gateway's own store instead
 * (openStore on SQLite: the gateway's table with its lease, retry budget and read model, its
 * group commit, WAL sync and background checkpoints), through the calls settlement makes: the
 * look-up by transaction, the claim with the gateway's inputs, the completion with the
 * answer's headers. The same server otherwise: the bench runs both, so what the gateway's
 * redemption record costs a paid request is measured in the same rounds.
 */
import { createHash, createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { memoForNonce, requestHasher, USDC_SOLANA_MINT } from '@tollgate/protocol';
import { Pool } from 'undici';
import { deriveKey } from '../../packages/gateway/src/crypto/keys.ts';
import { announce, exitOnSignal } from './announce.ts';
import { openPaidRecord, type PaidRecord, type Wire } from './paid-record.ts';

const env = (k: string): string => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is required`);
  return v;
};
const upstream = new Pool(env('BENCH_UPSTREAM_URL'), { connections: 64, keepAliveTimeout: 60_000 });
const rpcUrl = new URL(env('BENCH_SOLANA_RPC_URL'));
const rpc = new Pool(rpcUrl.origin, { connections: 64, keepAliveTimeout: 60_000 });
const rpcPath = `${rpcUrl.pathname}${rpcUrl.search}`;
const UPSTREAM_PATH = process.env['BENCH_UPSTREAM_PATH'] ?? '/paid';

// The gateway's requirement-token key, derived as the gateway derives it (crypto/keys.ts).
const derived = deriveKey(env('BENCH_TOKEN_SECRET'), 'requirement-token/v1');
const kid = derived.kid;
// A KeyObject made once: createHmac with raw key bytes would make one per call.
const tokenKey = createSecretKey(derived.key);

// ---- storage: SQLite, group commit (minimal-record.ts), or the gateway's store (paid-record.ts) ----
const record: PaidRecord = await openPaidRecord(
  process.env['BENCH_RECORD'] ?? 'minimal',
  env('BENCH_DB_FILE'),
);

// ---- checks ----
const STD_B64 = /^[A-Za-z0-9+/]*={0,2}$/;
const hashers = new Map<string, ReturnType<typeof requestHasher>>();

function refuse(res: ServerResponse, status: number, code: string): void {
  const body = JSON.stringify({ error: code });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function send(res: ServerResponse, status: number, body: Buffer, receipt: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': body.length,
    'x-payment-response': receipt,
  });
  res.end(body);
}

/** The fields of a jsonParsed `getTransaction` answer the check reads (a malformed one throws: 502). */
interface TokenBalance {
  mint: string;
  owner?: string;
  uiTokenAmount: { amount: string };
}
interface ParsedTransaction {
  blockTime?: number | null;
  meta: { err: unknown; preTokenBalances: TokenBalance[]; postTokenBalances: TokenBalance[] } | null;
  transaction: {
    signatures: string[];
    message: {
      accountKeys: { pubkey: string; signer: boolean }[];
      instructions: { program?: string; parsed?: unknown }[];
    };
  };
}

async function getTransaction(sig: string): Promise<ParsedTransaction | null> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'getTransaction',
    params: [sig, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }],
  });
  const r = await rpc.request({
    path: rpcPath,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const answer = JSON.parse(await r.body.text()) as { result?: ParsedTransaction | null };
  return answer.result ?? null;
}

/** Whether the transaction pays every split of the Solana option, from `payer`, with the memo. */
function pays(tx: ParsedTransaction, sig: string, payer: string, w: Wire): boolean {
  const option = w.o.find((o) => o.c === 'solana');
  const meta = tx.meta;
  if (!option || !meta || meta.err !== null) return false;
  const message = tx.transaction.message;
  if (tx.transaction.signatures[0] !== sig) return false;
  if (!message.accountKeys.some((k) => k.pubkey === payer && k.signer === true)) return false;
  const mint = option.a ?? USDC_SOLANA_MINT;
  const delta = new Map<string, bigint>();
  for (const [rows, sign] of [
    [meta.preTokenBalances, -1n],
    [meta.postTokenBalances, 1n],
  ] as const) {
    for (const b of rows) {
      if (b.mint !== mint || typeof b.owner !== 'string') continue;
      delta.set(b.owner, (delta.get(b.owner) ?? 0n) + sign * BigInt(b.uiTokenAmount.amount));
    }
  }
  for (const [, payTo, amount] of option.s) if ((delta.get(payTo) ?? 0n) < BigInt(amount)) return false;
  const memo = memoForNonce(w.n);
  return message.instructions.some((i) => i.program === 'spl-memo' && i.parsed === memo);
}

async function handle(req: import('node:http').IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  if (req.method === 'POST' && url === '/__reset') {
    // Only once no paid request is in flight: one finishing later would claim into the next run.
    while (inFlight > 0) await new Promise((r) => setTimeout(r, 10));
    await record.reset();
    return refuse(res, 200, 'reset');
  }
  const header = req.headers['x-payment'];
  if (typeof header !== 'string' || header.length > 12_000 || !STD_B64.test(header)) {
    return refuse(res, 402, 'payment_required');
  }
  let proof: Record<string, unknown>;
  let w: Wire;
  try {
    proof = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
    // The gateway's r2 token (requirement-token.ts): r2.<kid>.<quote>.<issue>.<mac>, the MAC over
    // the key id, the quote part's SHA-256 and the issue part.
    const parts = String(proof['paymentRequirementId']).split('.');
    if (parts.length !== 5 || parts[0] !== 'r2' || parts[1] !== kid)
      return refuse(res, 402, 'requirement_forged');
    const digest = createHash('sha256').update(parts[2]!).digest('base64url');
    const mac = createHmac('sha256', tokenKey)
      .update(`r2.${parts[1]}.${digest}.${parts[3]}`)
      .digest('base64url');
    const given = Buffer.from(parts[4]!);
    if (given.length !== mac.length || !timingSafeEqual(given, Buffer.from(mac))) {
      return refuse(res, 402, 'requirement_forged');
    }
    const read = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    const issue = read(parts[3]!) as Pick<Wire, 'n' | 'h' | 'e'>;
    w = { ...(read(parts[2]!) as Wire), n: issue.n, h: issue.h, e: issue.e };
  } catch {
    return refuse(res, 400, 'invalid_payment_header');
  }
  // The request is the one the token was issued for (its quote and this method, path and empty body).
  const quoteKey = `${w.s}|${w.p}|${w.f}|${JSON.stringify(w.o)}`;
  let hasher = hashers.get(quoteKey);
  if (!hasher) {
    hasher = requestHasher({
      scheme: w.s as 'exact_split',
      price: w.p,
      fee: w.f,
      accepts: w.o.map((o) => ({
        chain: o.c,
        network: o.w,
        asset: 'USDC', // the hash names the asset as the 402 does
        splits: o.s.map(([t, payTo, amount]) => ({
          recipientType: t === 0 ? ('provider' as const) : ('platform' as const),
          payTo,
          amount,
        })),
      })),
    });
    hashers.set(quoteKey, hasher);
  }
  const hash = hasher({
    method: req.method ?? 'GET',
    path: url,
    bodySha256: EMPTY_SHA256,
    nonce: w.n,
    expiresAt: new Date(w.e).toISOString(),
  });
  if (hash !== w.h || proof['requestHash'] !== w.h || proof['nonce'] !== w.n)
    return refuse(res, 402, 'request_mismatch');
  const sig = String(proof['txHashOrDigest']);
  const payer = String(proof['payer']);
  const receipt = Buffer.from(
    JSON.stringify({ success: true, chain: 'solana', network: proof['network'], txHashOrDigest: sig, payer }),
  ).toString('base64');

  const known = await record.known(sig, String(proof['network']));
  if (known) {
    if (known.nonce !== w.n) return refuse(res, 402, 'transaction_already_used');
    if (known.response === null) return refuse(res, 409, 'payment_in_progress');
    return send(res, known.response.status, known.response.body, receipt);
  }
  const tx = await getTransaction(sig);
  if (!tx) return refuse(res, 409, 'payment_pending');
  if (!pays(tx, sig, payer, w) || (tx['blockTime'] ?? 0) * 1000 > w.e + 60_000) {
    return refuse(res, 402, 'payment_invalid');
  }
  const claim = await record.claim({
    sig,
    payer,
    network: String(proof['network']),
    requirementId: String(proof['paymentRequirementId']),
    w,
  });
  if (claim === null) return refuse(res, 409, 'payment_in_progress');

  const up = await upstream.request({ path: UPSTREAM_PATH, method: 'GET' });
  const body = Buffer.from(await up.body.arrayBuffer());
  await record.complete(claim, up.statusCode, up.headers, body);
  send(res, up.statusCode, body, receipt);
}

const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

/** Requests being answered, so `/__reset` can wait for them. */
let inFlight = 0;
const server = createServer((req, res) => {
  req.resume();
  const paid = req.url !== '/__reset';
  if (paid) inFlight++;
  handle(req, res)
    .catch(() => {
      if (!res.headersSent) refuse(res, 502, 'failed');
      else res.destroy();
    })
    .finally(() => {
      if (paid) inFlight--;
    });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => announce({ port: (server.address() as AddressInfo).port }));
exitOnSignal(async () => {
  await new Promise((r) => server.close(r));
  await Promise.all([upstream.close(), rpc.close()]);
  await record.close();
});
