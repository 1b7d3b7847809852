/**
 * Payments as providers, payers and the operator see them (docs/provider-api.md,
 * "Payments"): decimal USDC strings, ISO times, one status (payment-status.ts), and for
 * the payer the x402 receipt its answer carried.
 */
import { formatAmount, USDC_DECIMALS } from '@tollgate/protocol';
import type { PaymentRecord } from '../store/store.ts';
import { paymentStatus } from './payment-status.ts';
import { v1Receipt, v2Receipt } from './receipts.ts';

export const UNIT = 'USDC';

export const usdc = (atomic: bigint): string => formatAmount(atomic < 0n ? 0n : atomic, USDC_DECIMALS);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** When a status is computed, and how long an unanswered payment stays retryable. */
export interface StatusClock {
  nowMs: number;
  undeliveredAfterMs: number;
}

/** A payment on a provider's page; the operator's list adds the project's slug. */
export function providerPaymentView(p: PaymentRecord, clock: StatusClock) {
  return {
    id: p.id,
    createdAt: iso(p.createdAtMs)!,
    deliveredAt: iso(p.deliveredAtMs),
    endpoint: p.endpoint,
    chain: p.chain,
    network: p.network,
    txId: p.txId,
    payer: p.payer,
    gross: usdc(p.amount),
    fee: usdc(p.fee),
    net: usdc(p.amount - p.fee),
    unit: UNIT,
    status: paymentStatus(p, clock.nowMs, clock.undeliveredAfterMs),
    replays: p.replays,
  };
}

export function operatorPaymentView(p: PaymentRecord, clock: StatusClock) {
  return { ...providerPaymentView(p, clock), project: p.projectSlug };
}

/** What an inference payment paid for, from its priced subject. */
function routeOf(subject: string | null): 'chat' | 'embeddings' | 'conversation' | null {
  if (subject?.startsWith('inf:chat:')) return 'chat';
  if (subject?.startsWith('inf:embeddings:')) return 'embeddings';
  if (subject?.startsWith('inf:conv:')) return 'conversation';
  return null;
}

/**
 * A payment in its payer's history, with the receipt its answer carried. `caip2` names a
 * chain's v2 network (the configured v2 scheme's); without one, the plain network name.
 */
export function payerPaymentView(p: PaymentRecord, clock: StatusClock, caip2: (p: PaymentRecord) => string) {
  const success = p.state === 'delivered';
  return {
    id: p.id,
    createdAt: iso(p.createdAtMs)!,
    deliveredAt: iso(p.deliveredAtMs),
    chain: p.chain,
    network: p.network,
    txId: p.txId,
    project: p.projectSlug,
    endpoint: p.endpoint,
    route: routeOf(p.subject),
    gross: usdc(p.amount),
    fee: usdc(p.fee),
    unit: UNIT,
    status: paymentStatus(p, clock.nowMs, clock.undeliveredAfterMs),
    replays: p.replays,
    receipt:
      p.x402Version === 2
        ? v2Receipt({ success, txId: p.txId, network: caip2(p), payer: p.payer, amount: p.amount })
        : v1Receipt({
            success,
            chain: p.chain,
            network: p.network,
            txId: p.txId,
            payer: p.payer,
            requirementId: p.requirementId,
          }),
  };
}

export const CSV_COLUMNS = [
  'id',
  'createdAt',
  'deliveredAt',
  'endpointId',
  'method',
  'path',
  'chain',
  'network',
  'txId',
  'payer',
  'gross',
  'fee',
  'net',
  'unit',
  'status',
  'replays',
] as const;

/** RFC 4180 quoting; a leading = + - @ is prefixed with ' so spreadsheets never run a cell as a formula. */
function cell(v: string | number | null): string {
  if (v === null) return '';
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function csvHeader(): string {
  return `${CSV_COLUMNS.join(',')}\r\n`;
}

/** One CSV line of a provider's payment view. */
export function csvLine(v: ReturnType<typeof providerPaymentView>): string {
  const row: Record<(typeof CSV_COLUMNS)[number], string | number | null> = {
    id: v.id,
    createdAt: v.createdAt,
    deliveredAt: v.deliveredAt,
    endpointId: v.endpoint?.id ?? null,
    method: v.endpoint?.method ?? null,
    path: v.endpoint?.path ?? null,
    chain: v.chain,
    network: v.network,
    txId: v.txId,
    payer: v.payer,
    gross: v.gross,
    fee: v.fee,
    net: v.net,
    unit: v.unit,
    status: v.status,
    replays: v.replays,
  };
  return `${CSV_COLUMNS.map((c) => cell(row[c])).join(',')}\r\n`;
}
