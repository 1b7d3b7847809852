import { describe, expect, it } from 'vitest';
import { keyRing } from '../crypto/keys.ts';
import { createSecretBox } from '../crypto/secret-box.ts';
import { sealOriginAuth } from './origin-auth.ts';

const box = createSecretBox(keyRing('a'.repeat(64), null, 'origin-secrets/v1'));
const header = (name: string) => () =>
  sealOriginAuth({ type: 'header', name, secret: 'origin-secret-1234' }, box);

describe('origin auth header names', () => {
  it('refuses the payment context and x402 headers the gateway sends or answers with', () => {
    for (const name of [
      'X-Tollgate-Payer',
      'x-tollgate-signature',
      'X-Tollgate-Anything',
      'Payment-Signature',
      'payment-required',
      'PAYMENT-RESPONSE',
    ]) {
      expect(header(name), name).toThrow(/the gateway controls/);
    }
  });

  it('accepts an ordinary API key header', () => {
    expect(header('X-Api-Key')().authName).toBe('X-Api-Key');
  });
});
