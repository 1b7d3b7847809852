import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { VerifyInput } from '../chain.ts';
import { decide } from '../chain.ts';
import { normaliseSolanaTransaction, SolanaShapeError, UNKNOWN_AUTHORITY } from './normalise.ts';

// Mainnet jsonParsed shape (notes/chains.md §2.2–2.3): Phantom-style compute budget,
// ATA creation for a new provider account, two transferChecked legs, one SPL memo.
const FIXTURE = readFileSync(new URL('./fixtures/usdc-split-with-memo.json', import.meta.url), 'utf8');

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const FAKE_USDC = '7eR1yv7pUzhaqQneKJ2fmVTRuzY61ja5KwfbBrLsq1Gu';
const SIG = 'yxBcx7s2GSAcvo7svfUuUXDodiokqZJESbxojmUW7vw7vmG5kLMHrxobXWmaUYeFgCtfFYrPsoBHiASsjEFahaf';
const PAYER = 'hhPwEtmgpHGNtBh2a1n4DTVU17NRvRuTr6dbgRpbtHb';
const PAYER_ATA = '4MnLQu3UHHFiEKLkA8hhxp5juKvvix8YfyeNwbKGjiSj';
const PROVIDER = 'CfH5sgJZ6UixVBA2XCjSEQpmVo3gnJNPZ6vT4CyYErwY';
const PLATFORM = 'EmS9ose81Hq3MAUgmARigTWX4ekBx2Zbtm2Sph8WKW9K';
const OTHER = 'BPvvbU9iiDprmxG5JZxXUnpN6fAuTY4V6RZdFTfQL2G';
const SIG_FEE_PAYER =
  'DyXZZCSiBREJ8YZ5cULd7PVdKpbkhHvHJ7otbJmLJajJtRsyq1irMMqKimYeKvRmZ8Sc2qWLhKjYR4ekM8RSzkV';
const MEMO = 'tollgate:v1:9c1e2b7f0a4d4e1b8f3c2a6d5e7b9c01';

// biome-ignore lint/suspicious/noExplicitAny: fixtures are mutated freely in tests
type Json = any;
const fixture = (): Json => JSON.parse(FIXTURE);
const normalise = (raw: unknown, mint = USDC, final = true) =>
  normaliseSolanaTransaction(raw, { signature: SIG, final, mint });

/** What @solana/kit does to an RPC answer, taken to the extreme: every integer becomes a bigint. */
function upcast(v: unknown): unknown {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (Array.isArray(v)) return v.map(upcast);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, upcast(x)]));
  return v;
}

/** The fixture's payment as the gateway quoted it, proven under `txHashOrDigest`. */
const quoted = (txHashOrDigest = SIG): VerifyInput => ({
  option: {
    chain: 'solana',
    network: 'mainnet',
    asset: USDC,
    memo: MEMO,
    splits: [
      { recipientType: 'provider', payTo: PROVIDER, amount: 900_000n },
      { recipientType: 'platform', payTo: PLATFORM, amount: 100_000n },
    ],
  },
  issuedAtMs: 1767225600_000 - 60_000,
  expiresAtMs: 1767225600_000 + 240_000,
  skewMs: 30_000,
  payer: PAYER,
  txHashOrDigest,
});

const topLevel = (tx: Json) => tx.transaction.message.instructions as Json[];
const transfers = (tx: Json) => topLevel(tx).filter((i) => i.parsed?.type === 'transferChecked');
const memoIndex = (tx: Json) => topLevel(tx).findIndex((i) => i.program === 'spl-memo');

describe('normaliseSolanaTransaction on a mainnet-shaped USDC split payment', () => {
  it('reads signers, per-owner deltas, authorities, memo and time', () => {
    const o = normalise(fixture());
    expect(o).toEqual({
      id: SIG,
      final: true,
      success: true,
      timeMs: 1767225600_000,
      signers: [PAYER],
      assetAuthorities: [PAYER],
      deltas: expect.arrayContaining([
        { owner: PAYER, asset: USDC, delta: -1_000_000n },
        { owner: PROVIDER, asset: USDC, delta: 900_000n },
        { owner: PLATFORM, asset: USDC, delta: 100_000n },
      ]),
      memos: [MEMO],
    });
    expect(o.deltas).toHaveLength(3);
  });

  it('counts a token account created in the transaction (no pre entry) from zero', () => {
    const o = normalise(fixture());
    expect(o.deltas.find((d) => d.owner === PROVIDER)?.delta).toBe(900_000n);
  });

  it('counts a token account closed in the transaction (no post entry) down to zero', () => {
    const tx = fixture();
    tx.meta.postTokenBalances = tx.meta.postTokenBalances.filter((b: Json) => b.accountIndex !== 1);
    expect(normalise(tx).deltas.find((d) => d.owner === PAYER)?.delta).toBe(-5_000_000n);
  });

  it('gives the same result when @solana/kit has turned the integers into bigints', () => {
    expect(normalise(upcast(fixture()))).toEqual(normalise(fixture()));
  });

  it('passes the shared decision for the quoted option', () => {
    expect(decide(quoted(), normalise(fixture()), (a, b) => a === b)).toEqual({
      status: 'verified',
      timeMs: 1767225600_000,
      legs: [
        { owner: PROVIDER, delta: 900_000n },
        { owner: PLATFORM, delta: 100_000n },
      ],
    });
  });

  it('marks a failed transaction as not successful, whatever its instructions say', () => {
    const tx = fixture();
    tx.meta.err = { InstructionError: [3, { Custom: 1 }] };
    tx.meta.status = { Err: tx.meta.err };
    tx.meta.postTokenBalances = tx.meta.preTokenBalances;
    const o = normalise(tx);
    expect(o.success).toBe(false);
    expect(o.deltas).toEqual([]);
  });

  it('carries the finality it was given', () => {
    expect(normalise(fixture(), USDC, false).final).toBe(false);
  });

  it('ignores a memo inside an inner instruction (a CPI cannot bind the payment)', () => {
    const tx = fixture();
    const [memo] = topLevel(tx).splice(memoIndex(tx), 1);
    tx.meta.innerInstructions[0].instructions.push({ ...memo, stackHeight: 2 });
    expect(normalise(tx).memos).toEqual([]);
  });

  it('reports every top-level memo, so a duplicate can be seen', () => {
    const tx = fixture();
    topLevel(tx).push({ ...topLevel(tx)[memoIndex(tx)] });
    expect(normalise(tx).memos).toEqual([MEMO, MEMO]);
  });

  it('accepts Memo v1 but not a look-alike memo program', () => {
    const v1 = fixture();
    topLevel(v1)[memoIndex(v1)].programId = 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo';
    expect(normalise(v1).memos).toEqual([MEMO]);
    const fake = fixture();
    topLevel(fake)[memoIndex(fake)].programId = 'Memo4c2pN8afCj432Lb7RMVKi9PbQnnW7ewFFaV3oAH';
    expect(normalise(fake).memos).toEqual([]);
  });

  it('ignores a memo that the node could not parse as text', () => {
    const tx = fixture();
    const i = memoIndex(tx);
    topLevel(tx)[i] = {
      accounts: [],
      data: '3yZe7d',
      programId: topLevel(tx)[i].programId,
      stackHeight: null,
    };
    expect(normalise(tx).memos).toEqual([]);
  });

  it('keys deltas by the exact mint, so another mint is not USDC', () => {
    const tx = fixture();
    for (const b of [...tx.meta.preTokenBalances, ...tx.meta.postTokenBalances]) b.mint = FAKE_USDC;
    for (const t of transfers(tx)) t.parsed.info.mint = FAKE_USDC;
    const o = normalise(tx);
    expect(o.deltas.every((d) => d.asset === FAKE_USDC)).toBe(true);
    // Moving another mint is not a movement of the offered asset.
    expect(o.assetAuthorities).toEqual([]);
  });

  it('names a transfer authority that is not the payer', () => {
    const tx = fixture();
    transfers(tx)[1].parsed.info.authority = OTHER;
    expect(normalise(tx).assetAuthorities.sort()).toEqual([OTHER, PAYER].sort());
  });

  it('finds authorities of asset transfers inside inner instructions too', () => {
    const tx = fixture();
    tx.meta.innerInstructions[0].instructions.push({ ...transfers(tx)[0], stackHeight: 2 });
    tx.meta.innerInstructions[0].instructions.at(-1).parsed = {
      type: 'transferChecked',
      info: { ...transfers(tx)[0].parsed.info, authority: OTHER },
    };
    expect(normalise(tx).assetAuthorities).toContain(OTHER);
  });

  it('resolves the mint of an unchecked transfer from its source account', () => {
    const tx = fixture();
    const t = transfers(tx)[0];
    t.parsed = {
      type: 'transfer',
      info: { source: PAYER_ATA, destination: t.parsed.info.destination, amount: '900000', authority: OTHER },
    };
    expect(normalise(tx).assetAuthorities).toContain(OTHER);
    // The same transfer from an account of another mint does not count.
    for (const b of [...tx.meta.preTokenBalances, ...tx.meta.postTokenBalances]) {
      if (b.accountIndex === 1) b.mint = FAKE_USDC;
    }
    expect(normalise(tx).assetAuthorities).not.toContain(OTHER);
  });

  it('names the multisig account as the authority of a multisig transfer', () => {
    const tx = fixture();
    const { authority, ...info } = transfers(tx)[0].parsed.info;
    transfers(tx)[0].parsed.info = { ...info, multisigAuthority: OTHER, signers: [authority] };
    expect(normalise(tx).assetAuthorities).toContain(OTHER);
  });

  it('treats an unparsed token instruction touching the asset as an unknown authority', () => {
    const tx = fixture();
    topLevel(tx).push({
      accounts: [PAYER_ATA, OTHER],
      data: '3Bxs4h24hBtQy9rw',
      programId: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
      stackHeight: null,
    });
    expect(normalise(tx).assetAuthorities).toContain(UNKNOWN_AUTHORITY);
  });

  it('credits nobody for a token balance without an owner', () => {
    const tx = fixture();
    for (const b of tx.meta.postTokenBalances) if (b.owner === PROVIDER) delete b.owner;
    expect(normalise(tx).deltas.find((d) => d.owner === PROVIDER)).toBeUndefined();
  });

  it('reports an unknown time when blockTime is null, which decide() calls pending, not refused', () => {
    const tx = fixture();
    tx.blockTime = null;
    expect(normalise(tx).timeMs).toBeNull();
    expect(decide(quoted(), normalise(tx), (a, b) => a === b)).toEqual({
      status: 'pending',
      reason: 'not_final',
    });
  });

  it('names a multi-signer transaction by signatures[0], so a proof naming signatures[1] is refused', () => {
    const tx = fixture();
    // A fee payer signs first; the payer's signature is the second one.
    tx.transaction.signatures = [SIG_FEE_PAYER, SIG];
    tx.transaction.message.accountKeys.unshift({
      pubkey: OTHER,
      signer: true,
      source: 'transaction',
      writable: true,
    });
    for (const b of [...tx.meta.preTokenBalances, ...tx.meta.postTokenBalances]) b.accountIndex += 1;
    const asked = normalise(tx);
    expect(asked.id).toBe(SIG_FEE_PAYER);
    expect(asked.signers).toEqual([OTHER, PAYER]);
    expect(decide(quoted(), asked, (a, b) => a === b)).toEqual({
      status: 'rejected',
      reason: 'transaction_id_not_canonical',
    });
    const byId = normaliseSolanaTransaction(tx, { signature: SIG_FEE_PAYER, final: true, mint: USDC });
    expect(decide(quoted(SIG_FEE_PAYER), byId, (a, b) => a === b).status).toBe('verified');
  });

  it('lists every signer, not only the fee payer', () => {
    const tx = fixture();
    tx.transaction.message.accountKeys[4].signer = true;
    expect(normalise(tx).signers).toEqual([PAYER, PROVIDER]);
  });

  describe('refuses answers that are not a jsonParsed transaction', () => {
    const cases: [string, (tx: Json) => unknown][] = [
      [
        'json encoding (account keys as strings)',
        (tx) => {
          tx.transaction.message.accountKeys = tx.transaction.message.accountKeys.map((k: Json) => k.pubkey);
          return tx;
        },
      ],
      [
        'an answer for another signature',
        (tx) => {
          tx.transaction.signatures = ['4'.repeat(88)];
          return tx;
        },
      ],
      [
        'meta null',
        (tx) => {
          tx.meta = null;
          return tx;
        },
      ],
      [
        'a non-integer token amount',
        (tx) => {
          tx.meta.postTokenBalances[0].uiTokenAmount.amount = '4000000.5';
          return tx;
        },
      ],
      [
        'a float amount',
        (tx) => {
          tx.meta.postTokenBalances[0].uiTokenAmount.amount = 4000000;
          return tx;
        },
      ],
      [
        'no meta.err field',
        (tx) => {
          delete tx.meta.err;
          return tx;
        },
      ],
      ['not an object', () => 'null'],
    ];
    for (const [name, mutate] of cases) {
      it(name, () => {
        expect(() => normalise(mutate(fixture()))).toThrow(SolanaShapeError);
      });
    }
  });
});
