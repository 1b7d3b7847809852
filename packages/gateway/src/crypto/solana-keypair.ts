/**
 * A Solana keypair from its text, in the formats the Solana CLI uses: a JSON array of
 * the 64 keypair bytes (solana-keygen's id.json) or their base58. Dependency-free, so the
 * configuration check can use it before anything heavy is loaded. Null when it is not one.
 */
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58Decode(s: string): Uint8Array | null {
  if (s === '' || s.length > 128) return null;
  let n = 0n;
  for (const ch of s) {
    const d = BASE58.indexOf(ch);
    if (d < 0) return null;
    n = n * 58n + BigInt(d);
  }
  const hex = n === 0n ? '' : n.toString(16);
  const body = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  const zeros = s.length - s.replace(/^1+/, '').length;
  return new Uint8Array([...new Uint8Array(zeros), ...body]);
}

export function parseSolanaKeypair(text: string): Uint8Array | null {
  const t = text.trim();
  let bytes: Uint8Array | null = null;
  if (t.startsWith('[')) {
    try {
      const arr = JSON.parse(t) as unknown;
      if (Array.isArray(arr) && arr.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) {
        bytes = Uint8Array.from(arr as number[]);
      }
    } catch {
      return null;
    }
  } else bytes = base58Decode(t);
  return bytes?.length === 64 ? bytes : null;
}
