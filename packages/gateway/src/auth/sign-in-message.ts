/**
 * The sign-in message in the Sign-In-With-Solana / CAIP-122 text form (the layout
 * `@solana/wallet-standard-util` produces), with "Sui account" for Sui. The server
 * keeps the exact text it issued and compares bytes, so the parser only needs to
 * recognise our own layout; anything else is a mismatch.
 */
import type { Chain } from '../store/store.ts';

export const SIGN_IN_STATEMENT =
  'Sign in to Tollgate to manage your paid APIs. This request will not trigger a blockchain transaction or cost any fees.';

export interface SignInFields {
  domain: string;
  chain: Chain;
  address: string;
  statement: string;
  uri: string;
  version: string;
  chainId: string;
  nonce: string;
  issuedAt: string;
  expirationTime: string;
}

const ACCOUNT_NAME: Record<Chain, string> = { solana: 'Solana', sui: 'Sui' };

export function formatSignInMessage(f: SignInFields): string {
  return [
    `${f.domain} wants you to sign in with your ${ACCOUNT_NAME[f.chain]} account:`,
    f.address,
    '',
    f.statement,
    '',
    `URI: ${f.uri}`,
    `Version: ${f.version}`,
    `Chain ID: ${f.chainId}`,
    `Nonce: ${f.nonce}`,
    `Issued At: ${f.issuedAt}`,
    `Expiration Time: ${f.expirationTime}`,
  ].join('\n');
}

const LAYOUT = new RegExp(
  [
    '^(?<domain>[^\\s/]+) wants you to sign in with your (?<account>Solana|Sui) account:',
    '(?<address>[^\\n]+)',
    '',
    '(?<statement>[^\\n]*)',
    '',
    'URI: (?<uri>[^\\n]+)',
    'Version: (?<version>[^\\n]+)',
    'Chain ID: (?<chainId>[^\\n]+)',
    'Nonce: (?<nonce>[^\\n]+)',
    'Issued At: (?<issuedAt>[^\\n]+)',
    'Expiration Time: (?<expirationTime>[^\\n]+)$',
  ].join('\\n'),
);

/** Parses a message in our layout; null for anything else. */
export function parseSignInMessage(text: string): SignInFields | null {
  const g = LAYOUT.exec(text)?.groups;
  if (!g) return null;
  return {
    domain: g['domain']!,
    chain: g['account'] === 'Sui' ? 'sui' : 'solana',
    address: g['address']!,
    statement: g['statement']!,
    uri: g['uri']!,
    version: g['version']!,
    chainId: g['chainId']!,
    nonce: g['nonce']!,
    issuedAt: g['issuedAt']!,
    expirationTime: g['expirationTime']!,
  };
}
