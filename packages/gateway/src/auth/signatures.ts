/**
 * Sign-in signature checks. Solana: ed25519 over the exact message bytes, the
 * public key being the address itself. Sui: a serialized personal-message
 * signature (flag || sig || pubkey, base64) as `signPersonalMessage` returns it.
 * Expected failures return false; nothing a caller sends can make these throw.
 */
import { createPublicKey, verify } from 'node:crypto';
import { isValidPersonalMessageSignature } from '@mysten/sui/verify';
import { getBase58Encoder } from '@solana/kit';
import type { Chain } from '../store/store.ts';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** The 64-byte signatures a string could spell (base58 or base64 wallets both exist). */
function solanaSignatureCandidates(text: string): Buffer[] {
  const out: Buffer[] = [];
  if (text.length <= 100 && BASE58.test(text)) {
    try {
      const b = Buffer.from(getBase58Encoder().encode(text));
      if (b.length === 64) out.push(b);
    } catch {
      // not base58 after all
    }
  }
  if (text.length <= 100 && BASE64.test(text)) {
    const b = Buffer.from(text, 'base64');
    if (b.length === 64) out.push(b);
  }
  return out;
}

function verifySolana(message: Uint8Array, signature: string, address: string): boolean {
  let key: ReturnType<typeof createPublicKey>;
  try {
    const raw = Buffer.from(getBase58Encoder().encode(address));
    if (raw.length !== 32) return false;
    key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
      format: 'jwk',
    });
  } catch {
    return false;
  }
  return solanaSignatureCandidates(signature).some((sig) => {
    try {
      return verify(null, message, key, sig);
    } catch {
      return false;
    }
  });
}

async function verifySui(message: Uint8Array, signature: string, address: string): Promise<boolean> {
  if (signature.length > 4096 || !BASE64.test(signature)) return false;
  try {
    // No client: zkLogin signatures need a network lookup, which sign-in does not do.
    return await isValidPersonalMessageSignature(message, signature, { address });
  } catch {
    return false;
  }
}

/** True when `signature` by `address` signs exactly `message` (UTF-8 bytes). */
export async function verifySignInSignature(
  chain: Chain,
  message: string,
  signature: string,
  address: string,
): Promise<boolean> {
  const bytes = new TextEncoder().encode(message);
  return chain === 'solana' ? verifySolana(bytes, signature, address) : verifySui(bytes, signature, address);
}
