/**
 * Origin authentication as configured by a provider: how the gateway proves
 * itself to the provider's API. The secret is sealed (AES-256-GCM) before it
 * reaches the store and only its last 4 characters are ever shown back.
 */
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Api, NewApi, OriginAuthType } from '../store/store.ts';
import { invalid } from './rules.ts';

export interface OriginAuthInput {
  type: 'bearer' | 'header' | 'query';
  name?: string;
  secret: string;
}

export interface OriginAuthView {
  type: OriginAuthType;
  name: string | null;
  secretLast4: string | null;
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
const QUERY_NAME = /^[A-Za-z0-9._~-]{1,64}$/;
/** Printable ASCII without leading/trailing space: safe in a header, no CR/LF injection. */
const SECRET = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** Secrets shorter than this show no characters at all: 4 of 8 would give half of it away. */
const MIN_LENGTH_TO_SHOW_LAST4 = 16;

/** Headers the proxy owns (framing, routing, payment); a provider may not replace them. */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'forwarded',
  'via',
  'x-payment',
  'x-payment-response',
  'payment-signature',
  'payment-required',
  'payment-response',
  'x-request-id',
]);

function forbiddenHeader(lower: string): boolean {
  return (
    FORBIDDEN_HEADERS.has(lower) ||
    lower.startsWith('proxy-') ||
    lower.startsWith('x-forwarded-') ||
    // The signed payment context (providers/payment-context.ts): a secret sent under one of
    // these names would be dropped, or would replace a context header the origin trusts.
    lower.startsWith('x-tollgate-') ||
    lower.startsWith('x-service-')
  );
}

/** Validates and seals origin auth into the store's columns. `null` means no origin auth. */
export function sealOriginAuth(
  input: OriginAuthInput | null,
  box: SecretBox,
): Pick<NewApi, 'authType' | 'authName' | 'authSecretEnc' | 'authSecretLast4'> {
  if (input === null) return { authType: 'none', authName: null, authSecretEnc: null, authSecretLast4: null };
  const { type, secret } = input;
  if (!SECRET.test(secret)) {
    throw invalid('auth.secret must be printable ASCII without leading or trailing spaces', 'invalid_auth');
  }
  let name: string | null = null;
  if (type === 'bearer') {
    if (input.name !== undefined) throw invalid('auth.name is not used with type "bearer"', 'invalid_auth');
  } else {
    if (input.name === undefined) throw invalid(`auth.name is required with type "${type}"`, 'invalid_auth');
    const pattern = type === 'header' ? HEADER_NAME : QUERY_NAME;
    if (!pattern.test(input.name)) throw invalid(`auth.name is not a valid ${type} name`, 'invalid_auth');
    if (type === 'header' && forbiddenHeader(input.name.toLowerCase())) {
      throw invalid(`auth.name "${input.name}" is a header the gateway controls`, 'invalid_auth');
    }
    name = input.name;
  }
  return {
    authType: type,
    authName: name,
    authSecretEnc: box.seal(secret),
    authSecretLast4: secret.length >= MIN_LENGTH_TO_SHOW_LAST4 ? secret.slice(-4) : null,
  };
}

export function originAuthView(api: Api): OriginAuthView | null {
  if (api.authType === 'none') return null;
  return {
    type: api.authType,
    name: api.authName,
    secretLast4: api.authSecretLast4 ? `…${api.authSecretLast4}` : null,
  };
}
