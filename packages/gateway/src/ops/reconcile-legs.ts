/**
 * The pure half of reconciliation (docs/operations-reconcile.md): what the ledger says a
 * redemption's transaction must show, and how a transaction re-read from the chain (the
 * chains' own ObservedTransaction, chains/chain.ts) differs from it. No I/O, no clock.
 *
 * A SPEC (x402 v1) payment pays every split on-chain. A stock x402 v2 payment pays the
 * whole amount to the platform, and the provider's share is a payable (DESIGN §4.12).
 */
import { formatAmount, memoForNonce, USDC_DECIMALS } from '@tollgate/protocol';
import type { ObservedTransaction } from '../chains/chain.ts';
import type { LedgerRedemption, Payable } from '../store/store.ts';

export type FindingCode =
  /** The ledger row itself: meta unreadable, splits not adding up to the gross column, fee column vs meta. */
  | 'ledger_unreadable'
  | 'ledger_gross_mismatch'
  | 'ledger_fee_mismatch'
  /** The chain. */
  | 'tx_not_found'
  | 'tx_id_mismatch'
  | 'tx_not_final'
  | 'tx_failed'
  | 'payer_not_signer'
  | 'memo_missing'
  | 'wrong_asset'
  | 'leg_missing'
  | 'leg_amount_mismatch'
  | 'leg_extra'
  | 'gross_mismatch'
  | 'payer_debit_mismatch'
  /** v2: the provider's share kept as a payable. */
  | 'payable_missing'
  | 'payable_mismatch'
  /** A payout the ledger marks failed (its payables owed again) whose transaction moved money. */
  | 'payout_failed_but_landed';

export interface Finding {
  code: FindingCode;
  message: string;
}

export interface Leg {
  recipient: string;
  /** Atomic units. */
  amount: bigint;
}

/** What the chain must show for one redemption, from its ledger row. */
export interface Expectation {
  txId: string;
  /** Who signed and paid (a payout: the platform, when the config names it). */
  payer: string | null;
  /** The memo that binds the transaction to this redemption's requirement (a payout has none). */
  memo: string | null;
  /** On-chain legs of the asset, one per recipient (splits to one wallet summed). */
  legs: Leg[];
  /** The gross column: what the ledger says the payer paid. */
  gross: bigint;
  /** v2: the payable the provider's share must be (null when there is none to keep). */
  payable: Leg | null;
  x402Version: 1 | 2;
}

const usdc = (a: bigint) => formatAmount(a < 0n ? -a : a, USDC_DECIMALS);
const signed = (a: bigint) => `${a < 0n ? '-' : ''}${usdc(a)}`;

interface MetaSplit {
  recipientType: string;
  payTo: string;
  amount: bigint;
}

function readMeta(text: string): { splits: MetaSplit[]; fee: bigint; x402Version: 1 | 2 } | string {
  let meta: unknown;
  try {
    meta = JSON.parse(text);
  } catch {
    return 'meta is not JSON';
  }
  if (typeof meta !== 'object' || meta === null) return 'meta is not an object';
  const m = meta as Record<string, unknown>;
  if (!Array.isArray(m['splits']) || m['splits'].length === 0) return 'meta has no splits';
  const splits: MetaSplit[] = [];
  for (const s of m['splits'] as unknown[]) {
    const split = s as Record<string, unknown> | null;
    const amount = split?.['amount'];
    if (typeof split?.['payTo'] !== 'string' || typeof amount !== 'string' || !/^[0-9]{1,30}$/.test(amount)) {
      return 'a split has no payTo or no atomic amount';
    }
    splits.push({
      recipientType: String(split['recipientType'] ?? ''),
      payTo: split['payTo'],
      amount: BigInt(amount),
    });
  }
  const fee = m['fee'];
  if (typeof fee !== 'string' || !/^[0-9]{1,30}$/.test(fee)) return 'meta has no atomic fee';
  return { splits, fee: BigInt(fee), x402Version: m['x402Version'] === 2 ? 2 : 1 };
}

function merge(legs: Leg[]): Leg[] {
  const by = new Map<string, bigint>();
  for (const l of legs) by.set(l.recipient, (by.get(l.recipient) ?? 0n) + l.amount);
  return [...by].map(([recipient, amount]) => ({ recipient, amount }));
}

/**
 * Reads a ledger row: what its transaction must show, and what is already wrong inside
 * the ledger (meta against the columns). `platformPayTo` is where a v2 payment goes when
 * the row's splits name no platform recipient (a price with no fee).
 */
export function expectationOf(
  row: LedgerRedemption,
  platformPayTo: string | null,
): { expectation: Expectation | null; findings: Finding[] } {
  const meta = readMeta(row.meta);
  if (typeof meta === 'string') {
    return { expectation: null, findings: [{ code: 'ledger_unreadable', message: meta }] };
  }
  const findings: Finding[] = [];
  const splitsTotal = meta.splits.reduce((s, x) => s + x.amount, 0n);
  const gross = row.amount ?? 0n;
  if (row.amount === null || splitsTotal !== row.amount) {
    findings.push({
      code: 'ledger_gross_mismatch',
      message: `gross column ${row.amount === null ? 'empty' : usdc(row.amount)} USDC, the splits add up to ${usdc(splitsTotal)} USDC`,
    });
  }
  if (row.fee === null || row.fee !== meta.fee) {
    findings.push({
      code: 'ledger_fee_mismatch',
      message: `fee column ${row.fee === null ? 'empty' : usdc(row.fee)} USDC, meta says ${usdc(meta.fee)} USDC`,
    });
  }
  let legs: Leg[];
  let payable: Leg | null = null;
  if (meta.x402Version === 2) {
    const platform = meta.splits.find((s) => s.recipientType === 'platform')?.payTo ?? platformPayTo;
    if (!platform) {
      findings.push({
        code: 'ledger_unreadable',
        message: 'v2 payment with no platform recipient to expect',
      });
      return { expectation: null, findings };
    }
    legs = [{ recipient: platform, amount: splitsTotal }];
    const provider = merge(
      meta.splits
        .filter((s) => s.recipientType === 'provider')
        .map((s) => ({ recipient: s.payTo, amount: s.amount })),
    );
    if (row.projectId !== null && provider.length === 1 && provider[0]!.amount > 0n) payable = provider[0]!;
  } else {
    legs = merge(meta.splits.map((s) => ({ recipient: s.payTo, amount: s.amount })));
  }
  return {
    expectation: {
      txId: row.txId,
      payer: row.payer,
      memo: memoForNonce(row.nonce),
      legs: legs.filter((l) => l.amount > 0n),
      gross,
      payable,
      x402Version: meta.x402Version,
    },
    findings,
  };
}

/**
 * Compares a re-read transaction with what the ledger expects, leg by leg, in the asset
 * `asset` (`sameAsset` as the chain's source compares asset ids). `tx` null = the chain
 * does not know the transaction.
 */
export function compareTransaction(
  e: Expectation,
  tx: ObservedTransaction | null,
  asset: string,
  sameAsset: (a: string, b: string) => boolean,
): Finding[] {
  if (tx === null) return [{ code: 'tx_not_found', message: 'the chain does not know this transaction' }];
  const out: Finding[] = [];
  if (tx.id !== e.txId) out.push({ code: 'tx_id_mismatch', message: `the chain files it as ${tx.id}` });
  // A transaction below the required finality is not normalized in full: nothing more to compare.
  if (!tx.final) return [...out, { code: 'tx_not_final', message: 'not final on the chain yet' }];
  if (!tx.success) return [...out, { code: 'tx_failed', message: 'the transaction failed on the chain' }];
  if (e.payer !== null && !tx.signers.includes(e.payer)) {
    out.push({ code: 'payer_not_signer', message: `payer ${e.payer} did not sign the transaction` });
  }
  if (e.memo !== null && !tx.memos.includes(e.memo)) {
    out.push({ code: 'memo_missing', message: `memo ${e.memo} is not in it` });
  }

  const inAsset = tx.deltas.filter((d) => sameAsset(d.asset, asset));
  if (inAsset.length === 0 && tx.deltas.length > 0) {
    out.push({ code: 'wrong_asset', message: `no movement of ${asset}` });
  }
  const net = new Map<string, bigint>();
  for (const d of inAsset) net.set(d.owner, (net.get(d.owner) ?? 0n) + d.delta);

  const expected = new Map(e.legs.map((l) => [l.recipient, l.amount]));
  let received = 0n;
  for (const leg of e.legs) {
    // A payer paying itself nets out on-chain: its own leg is seen on its debit instead.
    if (leg.recipient === e.payer) continue;
    const got = net.get(leg.recipient) ?? 0n;
    if (got > 0n) received += got;
    if (got <= 0n) {
      out.push({
        code: 'leg_missing',
        message: `${leg.recipient} should receive ${usdc(leg.amount)} USDC, got nothing`,
      });
    } else if (got !== leg.amount) {
      out.push({
        code: 'leg_amount_mismatch',
        message: `${leg.recipient} received ${usdc(got)} USDC, the ledger says ${usdc(leg.amount)} USDC`,
      });
    }
  }
  for (const [owner, delta] of net) {
    if (delta <= 0n || expected.has(owner) || owner === e.payer) continue;
    received += delta;
    out.push({
      code: 'leg_extra',
      message: `${owner} received ${usdc(delta)} USDC the ledger does not name`,
    });
  }
  const selfLeg = e.payer === null ? 0n : (expected.get(e.payer) ?? 0n);
  const observedGross = received + selfLeg;
  if (observedGross !== e.gross) {
    out.push({
      code: 'gross_mismatch',
      message: `the transaction moved ${usdc(observedGross)} USDC, the ledger's gross is ${usdc(e.gross)} USDC`,
    });
  }
  const debit = e.payer === null ? null : (net.get(e.payer) ?? 0n);
  if (debit !== null && debit !== selfLeg - observedGross) {
    out.push({
      code: 'payer_debit_mismatch',
      message: `payer ${e.payer} changed by ${signed(debit)} USDC, expected ${signed(selfLeg - observedGross)} USDC`,
    });
  }
  return out;
}

/** v2: the provider's share must be a payable of the same chain, network, recipient and amount. */
export function comparePayable(e: Expectation, row: LedgerRedemption, payable: Payable | null): Finding[] {
  if (!e.payable) return [];
  if (!payable) {
    return [
      {
        code: 'payable_missing',
        message: `no payable for the provider's ${usdc(e.payable.amount)} USDC to ${e.payable.recipient}`,
      },
    ];
  }
  const same =
    payable.recipient === e.payable.recipient &&
    payable.amount === e.payable.amount &&
    payable.chain === row.chain &&
    payable.network === row.network;
  return same
    ? []
    : [
        {
          code: 'payable_mismatch',
          message: `payable ${payable.id} owes ${usdc(payable.amount)} USDC to ${payable.recipient} on ${payable.chain}/${payable.network}, the splits say ${usdc(e.payable.amount)} USDC to ${e.payable.recipient}`,
        },
      ];
}
