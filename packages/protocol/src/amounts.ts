/**
 * Money on the wire is a decimal string of whole units ("0.01"); inside the code
 * and every hash it is a BigInt of atomic units. No floating point anywhere.
 */
import { ProtocolError } from './errors.ts';

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;
/** Upper bound on integer digits, so a hostile string cannot make a giant BigInt. */
const MAX_INTEGER_DIGITS = 15;

/** Parses "1.25" into atomic units (1250000n for 6 decimals). Throws ProtocolError('invalid_amount'). */
export function parseAmount(value: string, decimals: number): bigint {
  if (typeof value !== 'string') throw new ProtocolError('invalid_amount', 'amount must be a string');
  const m = DECIMAL.exec(value);
  if (!m)
    throw new ProtocolError(
      'invalid_amount',
      `not a plain decimal amount: ${JSON.stringify(value.slice(0, 40))}`,
    );
  const whole = m[1]!;
  const frac = m[2] ?? '';
  if (whole.length > MAX_INTEGER_DIGITS) throw new ProtocolError('invalid_amount', 'amount too large');
  if (frac.length > decimals) {
    throw new ProtocolError('invalid_amount', `amount has more than ${decimals} decimal places`);
  }
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

/** Formats atomic units as a trimmed decimal string: 10000n, 6 -> "0.01"; 0n -> "0". */
export function formatAmount(atomic: bigint, decimals: number): string {
  if (atomic < 0n) throw new ProtocolError('invalid_amount', 'negative amount');
  const base = 10n ** BigInt(decimals);
  const whole = atomic / base;
  const frac = (atomic % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : whole.toString();
}

/** Parses an integer string of atomic units ("10000"), as used inside hashes and tokens. */
export function parseAtomic(value: string): bigint {
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]{0,29})$/.test(value)) {
    throw new ProtocolError('invalid_amount', 'not an atomic integer amount');
  }
  return BigInt(value);
}

export const USDC_DECIMALS = 6;
