/**
 * HMAC-SHA-256 (RFC 2104) for hot paths: H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)) from two one-shot
 * `crypto.hash` calls over the key's padded blocks, which are made once per key. The bytes
 * are createHmac's (hmac.test.ts checks it on random keys and messages); the cost per call is
 * about half, because no Hmac object is made and the digest is encoded by the hash call itself.
 * Signs requirement tokens on every 402 and verifies them on every paid request
 * (payments/requirement-token.ts).
 */
import { hash } from 'node:crypto';

/** SHA-256's block size in bytes. */
const BLOCK = 64;

/** A keyed HMAC-SHA-256 of UTF-8 strings, answering the MAC in base64url. */
export type HmacSha256 = (message: string) => string;

export function hmacSha256Base64url(key: Uint8Array): HmacSha256 {
  // A key longer than a block is hashed first; a shorter one is zero-padded (RFC 2104 §2).
  const k = key.length > BLOCK ? hash('sha256', key, 'buffer') : key;
  // inner = (K ⊕ ipad) ‖ message, outer = (K ⊕ opad) ‖ H(inner): scratch buffers, the pads written once.
  let inner = Buffer.alloc(BLOCK + 4096, 0x36);
  const outer = Buffer.alloc(BLOCK + 32, 0x5c);
  for (let i = 0; i < k.length; i++) {
    inner[i] = 0x36 ^ (k[i] as number);
    outer[i] = 0x5c ^ (k[i] as number);
  }
  let view = inner.subarray(0, 0);
  return (message) => {
    // A UTF-8 character is at most 3 bytes per UTF-16 code unit: then the message always fits.
    if (message.length * 3 > inner.length - BLOCK) {
      const grown = Buffer.alloc(BLOCK + message.length * 3);
      inner.copy(grown, 0, 0, BLOCK);
      inner = grown;
      view = inner.subarray(0, 0);
    }
    const n = BLOCK + inner.write(message, BLOCK, 'utf8');
    // Messages of one length (a 402's tokens) reuse one view instead of a subarray per call.
    if (view.length !== n) view = inner.subarray(0, n);
    outer.write(hash('sha256', view, 'binary'), BLOCK, 'latin1');
    return hash('sha256', outer, 'base64url');
  };
}
