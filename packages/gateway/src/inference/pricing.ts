/**
 * Token prices and the worst-case quote (DESIGN §4.10). Prices come from the models
 * file as decimal USDC per token with up to 12 decimals; USDC has 6, so one such
 * price read with 12 decimals is exactly "atomic units per million tokens". All
 * arithmetic is BigInt; the final amount is rounded up to one atomic unit.
 */
import { formatAmount, parseAmount, USDC_DECIMALS } from '@tollgate/protocol';

/** Decimals allowed in a per-token price in the models file. */
export const PER_TOKEN_PRICE_DECIMALS = 12;
const MILLION = 1_000_000n;

/** Atomic USDC per million tokens, from a per-token decimal string ("0.000002" -> 2_000_000n). */
export function perMillionAtomic(perTokenUsdc: string): bigint {
  return parseAmount(perTokenUsdc, PER_TOKEN_PRICE_DECIMALS);
}

/** The per-token decimal string back from atomic-per-million (trailing zeros trimmed). */
export function perTokenString(perMillion: bigint): string {
  return formatAmount(perMillion, PER_TOKEN_PRICE_DECIMALS);
}

/** Decimal USDC per million tokens, for display. */
export function perMillionString(perMillion: bigint): string {
  return formatAmount(perMillion, USDC_DECIMALS);
}

export interface TokenPrices {
  /** Atomic USDC per million input (prompt) tokens. */
  inputPerMillion: bigint;
  /** Atomic USDC per million output (completion) tokens. */
  outputPerMillion: bigint;
}

/**
 * price = ceil((inputTokens × inputPerMillion + outputTokens × outputPerMillion) / 1e6)
 * in atomic USDC. `outputTokens` is the cap paid for, not what was generated.
 */
export function tokenPrice(prices: TokenPrices, inputTokens: number, outputTokens: number): bigint {
  if (!Number.isSafeInteger(inputTokens) || inputTokens < 0)
    throw new RangeError('inputTokens must be a non-negative integer');
  if (!Number.isSafeInteger(outputTokens) || outputTokens < 0)
    throw new RangeError('outputTokens must be a non-negative integer');
  const micro = BigInt(inputTokens) * prices.inputPerMillion + BigInt(outputTokens) * prices.outputPerMillion;
  return (micro + MILLION - 1n) / MILLION;
}

/**
 * The most output tokens that `budget` (atomic USDC, the price that was paid) covers
 * after `inputTokens`, i.e. the largest n with tokenPrice(input, n) <= budget.
 * Returns -1 when not even the input is covered; Infinity when output is free.
 */
export function affordableOutputTokens(prices: TokenPrices, budget: bigint, inputTokens: number): number {
  const room = budget * MILLION - BigInt(inputTokens) * prices.inputPerMillion;
  if (room < 0n) return -1;
  if (prices.outputPerMillion === 0n) return Number.POSITIVE_INFINITY;
  const n = room / prices.outputPerMillion;
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}
