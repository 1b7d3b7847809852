import { describe, expect, it } from 'vitest';
import { deriveKey, keyRing } from './keys.ts';
import { createSecretBox } from './secret-box.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

describe('secret box', () => {
  it('opens what it sealed, and the ciphertext does not contain the secret', () => {
    const box = createSecretBox(keyRing(A, null, 'origin-secrets/v1'));
    const sealed = box.seal('sk-live-123456');
    expect(sealed).not.toContain('sk-live');
    expect(box.open(sealed)).toBe('sk-live-123456');
  });

  it('seals the same secret differently each time', () => {
    const box = createSecretBox(keyRing(A, null, 'origin-secrets/v1'));
    expect(box.seal('x')).not.toBe(box.seal('x'));
  });

  it('still opens secrets sealed under the previous key after a rotation', () => {
    const old = createSecretBox(keyRing(A, null, 'origin-secrets/v1')).seal('legacy');
    expect(createSecretBox(keyRing(B, A, 'origin-secrets/v1')).open(old)).toBe('legacy');
    expect(() => createSecretBox(keyRing(B, null, 'origin-secrets/v1')).open(old)).toThrow();
  });

  it('rejects a tampered ciphertext', () => {
    const box = createSecretBox(keyRing(A, null, 'origin-secrets/v1'));
    const sealed = box.seal('secret');
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}${sealed.slice(-1)}`;
    expect(() => box.open(tampered)).toThrow();
  });

  it('derives different keys for different purposes', () => {
    expect(deriveKey(A, 'origin-secrets/v1').key.equals(deriveKey(A, 'requirement-token/v1').key)).toBe(
      false,
    );
  });
});
