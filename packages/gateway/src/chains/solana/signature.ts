/**
 * Whether a string is a Solana signature: base58 for exactly 64 bytes. The same answer as
 * @solana/kit's isSignature, which decodes through a BigInt (a few per cent of a paid
 * request's CPU, asked twice per proof); this counts the bytes with small integers.
 */
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

/** The decoded length of a base58 string, or -1 when it is not base58. */
export function base58ByteLength(text: string): number {
  let zeros = 0;
  while (zeros < text.length && text.charCodeAt(zeros) === 49 /* '1' */) zeros++;
  // Little-endian base-256 digits of the value; 58 < 256, so never longer than the text.
  const bytes = new Uint8Array(text.length);
  let len = 0;
  for (let i = zeros; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let carry = c < 128 ? DIGIT[c]! : -1;
    if (carry < 0) return -1;
    for (let j = 0; j < len; j++) {
      carry += bytes[j]! * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes[len++] = carry & 0xff;
      carry >>= 8;
    }
  }
  return zeros + len;
}

export function isSolanaSignature(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length >= 64 && value.length <= 88 && base58ByteLength(value) === 64
  );
}
