/**
 * Wallet sign-in (DESIGN §4.8): issue a one-time challenge, then trade a signed
 * challenge for an access token. The message is compared with the issued one
 * and the signature checked before the challenge is consumed, so neither a wrong
 * message nor a forged signature can burn somebody else's challenge; the consume
 * itself is one atomic store write, so a message works at most once across every
 * gateway process.
 */
import { randomBytes } from 'node:crypto';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import type { Chain, Owner } from '../store/store.ts';
import { formatSignInMessage, parseSignInMessage, SIGN_IN_STATEMENT } from './sign-in-message.ts';
import { verifySignInSignature } from './signatures.ts';
import { hashToken, newAccessToken } from './tokens.ts';

export interface Challenge {
  nonce: string;
  message: string;
  issuedAt: string;
  expiresAt: string;
}

export interface IssuedToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresAt: string;
  owner: Owner;
}

export type SignInFailure =
  | 'challenge_not_found'
  | 'challenge_expired'
  | 'message_mismatch'
  | 'wrong_domain'
  | 'bad_signature'
  | 'address_mismatch';

const MESSAGES: Record<SignInFailure, string> = {
  challenge_not_found: 'no open sign-in challenge for this message (unknown, already used or expired)',
  challenge_expired: 'the sign-in challenge has expired; request a new one',
  message_mismatch: 'the message is not the one issued for this challenge',
  wrong_domain: 'the message was issued for another domain',
  bad_signature: 'the signature does not verify for this address and message',
  address_mismatch: 'the chain or address does not match the challenge',
};

function fail(reason: SignInFailure): ApiError {
  return new ApiError('unauthorized', MESSAGES[reason], { reason });
}

/** The `domain` line of our messages: host (and port) of the public base URL. */
export function signInDomain(deps: Deps): string {
  return new URL(deps.config.publicBaseUrl).host;
}

export async function issueChallenge(deps: Deps, chain: Chain, address: string): Promise<Challenge> {
  const nowMs = deps.now();
  const expiresAtMs = nowMs + deps.config.authChallengeTtlSec * 1000;
  const nonce = randomBytes(16).toString('hex');
  const issuedAt = new Date(nowMs).toISOString();
  const expiresAt = new Date(expiresAtMs).toISOString();
  const message = formatSignInMessage({
    domain: signInDomain(deps),
    chain,
    address,
    statement: SIGN_IN_STATEMENT,
    uri: deps.config.publicBaseUrl,
    version: '1',
    chainId: `${chain}:${deps.config.chainNetwork}`,
    nonce,
    issuedAt,
    expirationTime: expiresAt,
  });
  await deps.store.auth.putChallenge({ nonce, chain, address, message, issuedAtMs: nowMs, expiresAtMs });
  return { nonce, message, issuedAt, expiresAt };
}

/** Checks a signed challenge and opens a session. `address` must already be normalised. */
export async function completeSignIn(
  deps: Deps,
  input: { chain: Chain; address: string; message: string; signature: string },
): Promise<IssuedToken> {
  const parsed = parseSignInMessage(input.message);
  if (!parsed) throw fail('message_mismatch');
  if (parsed.domain !== signInDomain(deps) || parsed.uri !== deps.config.publicBaseUrl)
    throw fail('wrong_domain');
  if (parsed.chain !== input.chain || parsed.address !== input.address) throw fail('address_mismatch');
  const expiresAtMs = Date.parse(parsed.expirationTime);
  if (!Number.isFinite(expiresAtMs)) throw fail('message_mismatch');
  if (expiresAtMs <= deps.now()) throw fail('challenge_expired');

  // Every check that needs no signature runs against the issued challenge before anything
  // is consumed: a wrong message (a client bug, or someone who saw the nonce) fails
  // without burning the challenge its real owner is about to use.
  const issued = await deps.store.auth.openChallenge(parsed.nonce, deps.now());
  if (!issued) throw fail('challenge_not_found');
  if (issued.chain !== input.chain || issued.address !== input.address) throw fail('address_mismatch');
  if (issued.message !== input.message) throw fail('message_mismatch');

  if (!(await verifySignInSignature(input.chain, input.message, input.signature, input.address))) {
    throw fail('bad_signature');
  }

  // Everything verified: consume atomically (exactly one concurrent caller, in any process,
  // wins), still bound to the message we compared.
  const nowMs = deps.now();
  const challenge = await deps.store.auth.consumeChallenge(parsed.nonce, nowMs, input.message);
  if (!challenge) throw fail('challenge_not_found');

  const owner: Owner = { chain: input.chain, address: input.address };
  const accessToken = newAccessToken();
  const sessionExpiresAtMs = nowMs + deps.config.sessionTtlSec * 1000;
  await deps.store.auth.createSession({
    tokenHash: hashToken(accessToken),
    owner,
    createdAtMs: nowMs,
    expiresAtMs: sessionExpiresAtMs,
  });
  return { accessToken, tokenType: 'Bearer', expiresAt: new Date(sessionExpiresAtMs).toISOString(), owner };
}
