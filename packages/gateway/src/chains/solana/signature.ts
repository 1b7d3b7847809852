/**
 * Whether a string is a Solana signature: base58 for exactly 64 bytes. The same answer as
 * @solana/kit's isSignature, which decodes through a BigInt (a few per cent of a paid
 * request's CPU, asked twice per proof); this counts the bytes with small integers.
 */
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

/** Limbs of 24 bits: a limb times 58^4 plus a carry stays below 2^53, exact in a double. */
const LIMB = 2 ** 24;
/** The value's limbs, least significant first (88 base58 digits need 22; longer texts grow it). */
let limbs = new Float64Array(32);

/**
 * The decoded length of a base58 string, or -1 when it is not base58: the leading '1's (one
 * zero byte each) plus the byte length of the value the rest spells, which is built four
 * digits at a time in 24-bit limbs (about a tenth of the work of one digit into bytes).
 */
export function base58ByteLength(text: string): number {
  let zeros = 0;
  while (zeros < text.length && text.charCodeAt(zeros) === 49 /* '1' */) zeros++;
  if (limbs.length < text.length) limbs = new Float64Array(text.length);
  let len = 0;
  let i = zeros;
  while (i < text.length) {
    let mul = 1;
    let carry = 0;
    for (let k = 0; k < 4 && i < text.length; k++, i++) {
      const c = text.charCodeAt(i);
      const digit = c < 128 ? DIGIT[c]! : -1;
      if (digit < 0) return -1;
      carry = carry * 58 + digit;
      mul *= 58;
    }
    for (let j = 0; j < len; j++) {
      const v = limbs[j]! * mul + carry;
      carry = Math.floor(v / LIMB);
      limbs[j] = v - carry * LIMB;
    }
    while (carry > 0) {
      const next = Math.floor(carry / LIMB);
      limbs[len++] = carry - next * LIMB;
      carry = next;
    }
  }
  if (len === 0) return zeros;
  // Whole limbs are 3 bytes each; the top one takes as many bytes as its bits need.
  return zeros + (len - 1) * 3 + Math.ceil((32 - Math.clz32(limbs[len - 1]!)) / 8);
}

export function isSolanaSignature(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length >= 64 && value.length <= 88 && base58ByteLength(value) === 64
  );
}
