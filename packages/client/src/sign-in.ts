/**
 * Wallet sign-in to a Tollgate gateway (docs/provider-api.md, "Sign-in"): ask for a
 * challenge, sign its message with the wallet, trade the signature for an access token
 * (a bearer token for the provider API, `/v1/projects…`).
 */
import type { MessageSigner } from './wallets/wallet.ts';

export interface SignInSession {
  /** `tg_…`: send it as `Authorization: Bearer <token>`. */
  accessToken: string;
  /** ISO time after which the token no longer works. */
  expiresAt: string;
  owner: { chain: 'sui' | 'solana'; address: string };
}

export interface SignInOptions {
  /** The fetch to use (default: the global one). */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  signal?: AbortSignal;
  /**
   * Allow a plain-http gateway that is not on loopback. Off by default: the access token
   * would cross the network in clear.
   */
  allowInsecureHttp?: boolean;
}

/**
 * Sign-in failed. `code` is the gateway's error code (`unauthorized`, `invalid_request`, …)
 * with its `reason` (`bad_signature`, `challenge_expired`, …) and HTTP `status`, or one of
 * the client's own: `gateway_unreachable`, `insecure_gateway`, `invalid_challenge` (the
 * gateway sent something that is not a sign-in message for this wallet: nothing was
 * signed), `invalid_response`.
 */
export class SignInError extends Error {
  override readonly name = 'SignInError';
  readonly code: string;
  readonly reason: string | undefined;
  readonly status: number | undefined;
  constructor(
    code: string,
    message: string,
    opts: { reason?: string; status?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.reason = opts.reason;
    this.status = opts.status;
  }
}

const ACCOUNT: Record<MessageSigner['chain'], string> = { solana: 'Solana', sui: 'Sui' };

function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

/** The gateway's base URL without a trailing slash; refuses plain http off loopback unless allowed. */
function baseOf(gatewayUrl: string | URL, allowInsecureHttp: boolean): string {
  let url: URL;
  try {
    url = new URL(gatewayUrl);
  } catch {
    throw new SignInError('invalid_request', `not a gateway URL: ${String(gatewayUrl)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SignInError('invalid_request', `the gateway URL must be http(s): ${url.href}`);
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !allowInsecureHttp) {
    throw new SignInError(
      'insecure_gateway',
      `refusing to sign in to ${url.origin} over plain http: the access token would cross the network in clear (use https)`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * True when `message` is a sign-in message (the Sign-In-With-Solana layout the gateway
 * issues) for this chain's account and this address: the wallet never signs anything else
 * a gateway might send instead.
 */
function isSignInMessageFor(message: unknown, signer: MessageSigner): message is string {
  if (typeof message !== 'string' || message.length > 4096) return false;
  const [first = '', second = '', ...rest] = message.split('\n');
  const sameAddress =
    signer.chain === 'sui'
      ? second.toLowerCase() === signer.address.toLowerCase()
      : second === signer.address;
  return (
    first.endsWith(` wants you to sign in with your ${ACCOUNT[signer.chain]} account:`) &&
    sameAddress &&
    rest.some((l) => l.startsWith('Nonce: ')) &&
    rest.some((l) => l.startsWith('URI: '))
  );
}

async function post<T>(
  fetchImpl: NonNullable<SignInOptions['fetch']>,
  base: string,
  path: string,
  body: unknown,
  signal: AbortSignal | undefined,
): Promise<T> {
  let res: Response;
  try {
    res = await fetchImpl(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      redirect: 'error',
      ...(signal ? { signal } : {}),
    });
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    const cause = (e as Error).cause as Error | undefined;
    throw new SignInError(
      'gateway_unreachable',
      `cannot reach ${base}: ${cause?.message ?? (e as Error).message}`,
      { cause: e },
    );
  }
  let json: unknown;
  try {
    json = await res.json();
  } catch (e) {
    throw new SignInError(
      'invalid_response',
      `${base}${path} answered ${res.status} with a body that is not JSON`,
      {
        status: res.status,
        cause: e,
      },
    );
  }
  if (!res.ok) {
    const e = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
    const code = typeof e['error'] === 'string' ? e['error'] : `http_${res.status}`;
    const reason = typeof e['reason'] === 'string' ? e['reason'] : undefined;
    const message = typeof e['message'] === 'string' ? e['message'] : res.statusText;
    throw new SignInError(code, `${code}${reason ? ` (${reason})` : ''}: ${message}`, {
      status: res.status,
      ...(reason ? { reason } : {}),
    });
  }
  return json as T;
}

/**
 * Signs in to a gateway with a wallet: challenge → the wallet signs the message → verify.
 * Returns the access token for the provider API and when it expires. Throws `SignInError`.
 * @example
 * const wallet = solanaWallet({ secretKey: loadSolanaKeyFile('id.json'), rpcUrl });
 * const { accessToken } = await signIn('https://gateway.example.com', wallet);
 * await fetch('https://gateway.example.com/v1/projects', { headers: { authorization: `Bearer ${accessToken}` } });
 */
export async function signIn(
  gatewayUrl: string | URL,
  wallet: MessageSigner,
  opts: SignInOptions = {},
): Promise<SignInSession> {
  const base = baseOf(gatewayUrl, opts.allowInsecureHttp === true);
  const fetchImpl = opts.fetch ?? fetch;
  const who = { chain: wallet.chain, address: wallet.address };
  const challenge = await post<{ message?: unknown }>(
    fetchImpl,
    base,
    '/v1/auth/challenge',
    who,
    opts.signal,
  );
  const message = challenge.message;
  if (!isSignInMessageFor(message, wallet)) {
    throw new SignInError(
      'invalid_challenge',
      `${base} did not send a sign-in message for ${wallet.chain} account ${wallet.address}; nothing was signed`,
    );
  }
  const signature = await wallet.signMessage(message);
  const session = await post<Partial<SignInSession>>(
    fetchImpl,
    base,
    '/v1/auth/verify',
    { ...who, message, signature },
    opts.signal,
  );
  if (typeof session.accessToken !== 'string' || typeof session.expiresAt !== 'string' || !session.owner) {
    throw new SignInError('invalid_response', `${base} answered the sign-in without an access token`);
  }
  return { accessToken: session.accessToken, expiresAt: session.expiresAt, owner: session.owner };
}
