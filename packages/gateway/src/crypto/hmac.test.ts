import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hmacSha256Base64url } from './hmac.ts';

const reference = (key: Uint8Array, message: string) =>
  createHmac('sha256', key).update(message).digest('base64url');

describe('hmacSha256Base64url', () => {
  it('equals createHmac for any key and message, reusing one keyed function', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 150 }),
        fc.array(fc.string({ unit: 'binary', maxLength: 3000 }), { minLength: 1, maxLength: 4 }),
        (key, messages) => {
          const mac = hmacSha256Base64url(key);
          for (const m of messages) expect(mac(m)).toBe(reference(key, m));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('matches RFC 4231 test case 2 and handles messages longer than its first buffer', () => {
    const key = Buffer.from('Jefe');
    expect(
      Buffer.from(hmacSha256Base64url(key)('what do ya want for nothing?'), 'base64url').toString('hex'),
    ).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
    const mac = hmacSha256Base64url(Buffer.alloc(32, 7));
    for (const m of ['a', '€'.repeat(5000), 'b'.repeat(20_000), 'c']) {
      expect(mac(m)).toBe(reference(Buffer.alloc(32, 7), m));
    }
  });
});
