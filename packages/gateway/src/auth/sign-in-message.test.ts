import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatSignInMessage,
  parseSignInMessage,
  SIGN_IN_STATEMENT,
  type SignInFields,
} from './sign-in-message.ts';

const fields: SignInFields = {
  domain: 'gateway.example.com:8443',
  chain: 'solana',
  address: '6sxwMi2vBEGXZUzUA64TZugnSac9nyHuaDVF3t7CZJur',
  statement: SIGN_IN_STATEMENT,
  uri: 'https://gateway.example.com:8443',
  version: '1',
  chainId: 'solana:mainnet',
  nonce: '9930b8af973d210f99290595dd928ca1',
  issuedAt: '2026-11-22T01:29:35.295Z',
  expirationTime: '2026-11-22T01:34:35.295Z',
};

describe('sign-in message', () => {
  it('has the SIWS text layout', () => {
    expect(formatSignInMessage(fields)).toBe(
      [
        'gateway.example.com:8443 wants you to sign in with your Solana account:',
        '6sxwMi2vBEGXZUzUA64TZugnSac9nyHuaDVF3t7CZJur',
        '',
        SIGN_IN_STATEMENT,
        '',
        'URI: https://gateway.example.com:8443',
        'Version: 1',
        'Chain ID: solana:mainnet',
        'Nonce: 9930b8af973d210f99290595dd928ca1',
        'Issued At: 2026-11-22T01:29:35.295Z',
        'Expiration Time: 2026-11-22T01:34:35.295Z',
      ].join('\n'),
    );
  });

  it('round-trips through the parser on both chains', () => {
    const line = fc.stringMatching(/^[!-~][ -~]{0,40}$/);
    fc.assert(
      fc.property(
        fc.constantFrom('sui' as const, 'solana' as const),
        line,
        line,
        line,
        (chain, address, nonce, statement) => {
          const f = { ...fields, chain, address, nonce, statement };
          expect(parseSignInMessage(formatSignInMessage(f))).toEqual(f);
        },
      ),
    );
  });

  it('refuses anything that is not exactly the layout', () => {
    const text = formatSignInMessage(fields);
    for (const bad of [
      `${text}\n`,
      `${text}\nResources:\n- https://evil.example`,
      `\n${text}`,
      text.replace('Solana account', 'Ethereum account'),
      text.replace('\nVersion: 1', ''),
      text.replace('gateway.example.com:8443 wants', 'https://gateway.example.com/ wants'),
      text.replaceAll('\n', '\r\n'),
      '',
    ]) {
      expect(parseSignInMessage(bad)).toBeNull();
    }
  });
});
