/**
 * Pure translation of a Solana `getTransaction` (encoding `jsonParsed`) answer into
 * the chain-neutral ObservedTransaction. No decisions here — only facts, read the
 * way an attacker cannot bend: balances from pre/post token balances (not from
 * instructions), memos only from top-level instructions of the real memo programs.
 * Accepts numbers or bigints wherever mainnet sends integers (@solana/kit upcasts).
 */
import { SOLANA_MEMO_PROGRAMS, SOLANA_TOKEN_PROGRAMS } from '@tollgate/protocol';
import type { ObservedTransaction } from '../chain.ts';

export { SOLANA_MEMO_PROGRAMS, SOLANA_TOKEN_PROGRAMS };

const TRANSFER_TYPES = new Set(['transfer', 'transferChecked', 'transferCheckedWithFee']);
/** Stands for an authority we could not read: never equal to a payer, so decide() rejects. */
export const UNKNOWN_AUTHORITY = '<unknown>';

/** The node's answer is not what a jsonParsed getTransaction returns: an infrastructure fault. */
export class SolanaShapeError extends Error {
  override readonly name = 'SolanaShapeError';
}

export interface NormaliseOptions {
  /**
   * The signature that was asked for; the answer must carry it. The record's `id` is the
   * transaction's first signature, which decide() requires the proof to name.
   */
  signature: string;
  /** Whether the answer came back at the required commitment. */
  final: boolean;
  /** The offered asset's mint: only transfers of this mint count as asset movements. */
  mint: string;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function obj(v: unknown, what: string): Obj {
  if (!isObj(v)) throw new SolanaShapeError(`${what} is not an object`);
  return v;
}

function arr(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new SolanaShapeError(`${what} is not an array`);
  return v;
}

function int(v: unknown, what: string): number {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  throw new SolanaShapeError(`${what} is not an integer`);
}

const ATOMIC = /^[0-9]{1,30}$/;

function atomic(v: unknown, what: string): bigint {
  if (typeof v === 'string' && ATOMIC.test(v)) return BigInt(v);
  throw new SolanaShapeError(`${what} is not an atomic amount string`);
}

/*
 * The same checks for the i-th entry of a list, the entry's name (`what[i]` and a field)
 * made only when the check fails: these run for every key, balance and instruction of
 * every paid request, and the names were most of the work.
 */
const at = (what: string, i: number, field: string) => `${what}[${i}]${field}`;

/** obj() of a list entry (or of its field). */
function objAt(v: unknown, what: string, i: number, field = ''): Obj {
  return isObj(v) ? v : obj(v, at(what, i, field));
}

/** arr() of a list entry's field. */
function arrAt(v: unknown, what: string, i: number, field: string): unknown[] {
  return Array.isArray(v) ? v : arr(v, at(what, i, field));
}

/** int() of a list entry's field: the common case (a plain number) without naming it. */
function intAt(v: unknown, what: string, i: number, field: string): number {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : int(v, at(what, i, field));
}

/** atomic() of a list entry's field: the common case without naming it. */
function atomicAt(v: unknown, what: string, i: number, field: string): bigint {
  return typeof v === 'string' && ATOMIC.test(v) ? BigInt(v) : atomic(v, at(what, i, field));
}

interface TokenBalanceRow {
  accountIndex: number;
  mint: string;
  owner: string | null;
  amount: bigint;
}

function tokenBalances(v: unknown, what: string): TokenBalanceRow[] {
  // A missing list (old nodes) means "no token accounts recorded", same as [].
  if (v === undefined || v === null) return [];
  return arr(v, what).map((entry, i) => {
    const e = objAt(entry, what, i);
    const ui = objAt(e['uiTokenAmount'], what, i, '.uiTokenAmount');
    if (typeof e['mint'] !== 'string') throw new SolanaShapeError(`${at(what, i, '.mint')} is not a string`);
    return {
      accountIndex: intAt(e['accountIndex'], what, i, '.accountIndex'),
      mint: e['mint'],
      owner: typeof e['owner'] === 'string' ? e['owner'] : null,
      amount: atomicAt(ui['amount'], what, i, '.uiTokenAmount.amount'),
    };
  });
}

export function normaliseSolanaTransaction(raw: unknown, opts: NormaliseOptions): ObservedTransaction {
  const tx = obj(raw, 'transaction response');
  const meta = obj(tx['meta'], 'meta');
  const transaction = obj(tx['transaction'], 'transaction');
  const message = obj(transaction['message'], 'transaction.message');
  const signatures = arr(transaction['signatures'], 'transaction.signatures');
  if (!signatures.includes(opts.signature)) {
    throw new SolanaShapeError('the answer is for a different transaction');
  }
  // The transaction's id: a real node files it under this one only.
  const id = signatures[0];
  if (typeof id !== 'string') throw new SolanaShapeError('transaction.signatures[0] is not a string');

  const keys = arr(message['accountKeys'], 'accountKeys').map((k, i) => {
    const key = objAt(k, 'accountKeys', i, ' (not jsonParsed?)');
    if (typeof key['pubkey'] !== 'string')
      throw new SolanaShapeError(`${at('accountKeys', i, '.pubkey')} is not a string`);
    return { pubkey: key['pubkey'], signer: key['signer'] === true };
  });

  if (!('err' in meta)) throw new SolanaShapeError('meta.err is missing');
  const blockTime = tx['blockTime'];
  const timeMs = blockTime === null || blockTime === undefined ? null : int(blockTime, 'blockTime') * 1000;

  const pre = tokenBalances(meta['preTokenBalances'], 'preTokenBalances');
  const post = tokenBalances(meta['postTokenBalances'], 'postTokenBalances');

  const net = new Map<string, { owner: string; asset: string; delta: bigint }>();
  const add = (row: TokenBalanceRow, sign: bigint) => {
    // No owner = cannot be credited to anyone: leaving it out can only under-count a recipient.
    if (row.owner === null) return;
    const k = `${row.owner}\u0000${row.mint}`;
    const cur = net.get(k) ?? { owner: row.owner, asset: row.mint, delta: 0n };
    cur.delta += sign * row.amount;
    net.set(k, cur);
  };
  for (const row of pre) add(row, -1n);
  for (const row of post) add(row, 1n);

  const mintOfAccount = new Map<string, string>();
  for (const rows of [pre, post]) {
    for (const row of rows) {
      const key = keys[row.accountIndex];
      if (key) mintOfAccount.set(key.pubkey, row.mint);
    }
  }

  const topLevel = arr(message['instructions'], 'transaction.message.instructions');
  const inner = arr(meta['innerInstructions'] ?? [], 'meta.innerInstructions').flatMap((group, i) =>
    arrAt(objAt(group, 'innerInstructions', i)['instructions'], 'innerInstructions', i, '.instructions'),
  );

  const authorities = new Set<string>();
  for (const list of [topLevel, inner])
    for (const ix of list) {
      const i = obj(ix, 'instruction');
      if (typeof i['programId'] !== 'string' || !SOLANA_TOKEN_PROGRAMS.includes(i['programId'])) continue;
      if (!isObj(i['parsed'])) {
        // Unparsed but touching the asset (its mint or an account holding it): it might move it.
        const accounts = Array.isArray(i['accounts']) ? i['accounts'] : [];
        if (accounts.some((a) => a === opts.mint || mintOfAccount.get(String(a)) === opts.mint)) {
          authorities.add(UNKNOWN_AUTHORITY);
        }
        continue;
      }
      const type = i['parsed']['type'];
      if (typeof type !== 'string' || !TRANSFER_TYPES.has(type)) continue;
      const rawInfo = i['parsed']['info'];
      const info = isObj(rawInfo) ? rawInfo : obj(rawInfo, `${type}.info`);
      const mint =
        typeof info['mint'] === 'string' ? info['mint'] : mintOfAccount.get(String(info['source']));
      if (mint !== undefined && mint !== opts.mint) continue;
      const authority = info['authority'] ?? info['multisigAuthority'];
      authorities.add(typeof authority === 'string' ? authority : UNKNOWN_AUTHORITY);
    }

  const memos: string[] = [];
  for (const ix of topLevel) {
    const i = obj(ix, 'instruction');
    if (
      i['program'] === 'spl-memo' &&
      typeof i['programId'] === 'string' &&
      SOLANA_MEMO_PROGRAMS.includes(i['programId']) &&
      typeof i['parsed'] === 'string'
    ) {
      memos.push(i['parsed']);
    }
  }

  return {
    id,
    final: opts.final,
    success: meta['err'] === null,
    timeMs,
    signers: keys.filter((k) => k.signer).map((k) => k.pubkey),
    assetAuthorities: [...authorities],
    deltas: [...net.values()].filter((d) => d.delta !== 0n),
    memos,
  };
}
