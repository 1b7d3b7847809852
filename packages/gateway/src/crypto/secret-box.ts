/**
 * AES-256-GCM for origin secrets at rest. Format: `v1.<kid>.<iv b64url>.<ciphertext+tag b64url>`.
 * Decryption tries the key named by kid, so secrets written before a rotation stay readable.
 */
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto';
import type { DerivedKey } from './keys.ts';

export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function createSecretBox(ring: DerivedKey[]): SecretBox {
  const first = ring[0];
  if (!first) throw new Error('secret box needs at least one key');
  // KeyObjects once: cipher constructors re-validate a raw Buffer key on every call.
  const keys = ring.map((k) => ({ kid: k.kid, key: createSecretKey(k.key) }));
  const current = keys[0]!;
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `v1.${current.kid}.${iv.toString('base64url')}.${ct.toString('base64url')}`;
    },
    open(sealed) {
      const [v, kid, ivText, ctText] = sealed.split('.');
      const k = keys.find((r) => r.kid === kid);
      if (v !== 'v1' || !k || !ivText || !ctText)
        throw new Error('sealed secret has an unknown format or key');
      const data = Buffer.from(ctText, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', k.key, Buffer.from(ivText, 'base64url'));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString(
        'utf8',
      );
    },
  };
}
