import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decide } from '../chain.ts';
import { normaliseSolanaTransaction } from './normalise.ts';
import { JsonRpcError, parseRpcAnswer } from './rpc.ts';

// The mainnet-shaped answer normalise.test.ts reads, here as the bytes a node sends.
const FIXTURE = readFileSync(new URL('./fixtures/usdc-split-with-memo.json', import.meta.url), 'utf8');
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const SIG = 'yxBcx7s2GSAcvo7svfUuUXDodiokqZJESbxojmUW7vw7vmG5kLMHrxobXWmaUYeFgCtfFYrPsoBHiASsjEFahaf';
const PAYER = 'hhPwEtmgpHGNtBh2a1n4DTVU17NRvRuTr6dbgRpbtHb';
const PROVIDER = 'CfH5sgJZ6UixVBA2XCjSEQpmVo3gnJNPZ6vT4CyYErwY';
const PLATFORM = 'EmS9ose81Hq3MAUgmARigTWX4ekBx2Zbtm2Sph8WKW9K';
const MEMO = 'tollgate:v1:9c1e2b7f0a4d4e1b8f3c2a6d5e7b9c01';

const envelope = (resultText: string) => `{"jsonrpc":"2.0","result":${resultText},"id":1}`;
const normalise = (raw: unknown) =>
  normaliseSolanaTransaction(raw, { signature: SIG, final: true, mint: USDC });

/** What @solana/kit handed the normalizer: every integer a bigint. */
function upcast(v: unknown): unknown {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (Array.isArray(v)) return v.map(upcast);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, upcast(x)]));
  return v;
}

describe('parseRpcAnswer (the lean read of getTransaction)', () => {
  it('normalizes the fixture exactly as the BigInt-reviving parse did', () => {
    const lean = normalise(parseRpcAnswer(envelope(FIXTURE)));
    expect(lean).toEqual(normalise(upcast(JSON.parse(FIXTURE))));
    expect(lean.memos).toEqual([MEMO]);
    expect(lean.signers).toContain(PAYER);
  });

  it('leads to the same verdict for the quoted option', () => {
    const observed = normalise(parseRpcAnswer(envelope(FIXTURE)));
    const verdict = decide(
      {
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
        txHashOrDigest: SIG,
      },
      observed,
      (a, b) => a === b,
    );
    expect(verdict.status).toBe('verified');
  });

  it('is unaffected by integers beyond 2^53 in fields the verifier does not read', () => {
    const huge = FIXTURE.replace('"fee": 15000', '"fee": 18446744073709551615');
    expect(huge).not.toBe(FIXTURE);
    expect(normalise(parseRpcAnswer(envelope(huge)))).toEqual(normalise(parseRpcAnswer(envelope(FIXTURE))));
  });

  it('refuses (never rounds) an unsafe integer where the verifier reads one', () => {
    const tx = JSON.parse(FIXTURE);
    const text = JSON.stringify(tx).replace(`"blockTime":${tx.blockTime}`, '"blockTime":9007199254740993');
    expect(() => normalise(parseRpcAnswer(envelope(text)))).toThrow(/blockTime/);
  });

  it('keeps amounts exact: they arrive as strings and become bigints in the normalizer', () => {
    const deltas = normalise(parseRpcAnswer(envelope(FIXTURE))).deltas;
    expect(deltas.find((d) => d.owner === PROVIDER)?.delta).toBe(900_000n);
    expect(deltas.every((d) => typeof d.delta === 'bigint')).toBe(true);
  });

  it('gives null for an unknown transaction', () => {
    expect(parseRpcAnswer(envelope('null'))).toBeNull();
  });

  it('throws JsonRpcError on an error answer, on text that is not JSON, and on an answer without result', () => {
    for (const text of [
      '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":1}',
      '<html>bad gateway</html>',
      '[1,2]',
      '"x"',
      '{"jsonrpc":"2.0","id":1}',
    ]) {
      expect(() => parseRpcAnswer(text)).toThrow(JsonRpcError);
    }
  });
});
