/**
 * Purpose-bound keys derived from the server secret with HKDF-SHA-256, so one
 * master secret never signs two kinds of thing. The key id (first 8 hex of a
 * hash of the secret) lets tokens name the key that made them, for rotation.
 */
import { createHash, hkdfSync } from 'node:crypto';

export type KeyPurpose = 'requirement-token/v1' | 'origin-secrets/v1' | 'session-token/v1' | 'page-cursor/v1';

export interface DerivedKey {
  kid: string;
  key: Buffer;
}

export function keyId(secret: string): string {
  return createHash('sha256').update(`tollgate-kid:${secret}`).digest('hex').slice(0, 8);
}

export function deriveKey(secret: string, purpose: KeyPurpose): DerivedKey {
  const key = Buffer.from(
    hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), `tollgate/${purpose}`, 32),
  );
  return { kid: keyId(secret), key };
}

/** The current key first, then the previous one (accepted for verification only). */
export function keyRing(secret: string, previous: string | null, purpose: KeyPurpose): DerivedKey[] {
  return previous ? [deriveKey(secret, purpose), deriveKey(previous, purpose)] : [deriveKey(secret, purpose)];
}
