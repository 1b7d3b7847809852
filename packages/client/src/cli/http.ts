/** A small JSON client for the gateway's provider API, used by the CLI commands. */
import { CliError, type CliIo, optionalString, type ParsedValues } from './command.ts';
import { readCredentials, resolveGateway } from './credentials.ts';

export interface GatewayClient {
  gateway: string;
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

/** An error answer from the gateway: its code, message and reason, never a stack. */
export class GatewayError extends CliError {
  readonly status: number;
  readonly code: string;
  readonly reason: string | undefined;
  /** The gateway's own message, without code and reason. */
  readonly gatewayMessage: string;
  constructor(status: number, code: string, message: string, reason: string | undefined) {
    super(`${code}${reason ? ` (${reason})` : ''}: ${message}`);
    this.status = status;
    this.code = code;
    this.reason = reason;
    this.gatewayMessage = message;
  }
}

/** Loopback hosts, the only ones a token may travel to over plain http (a local or sandbox gateway). */
function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

/**
 * A client for the gateway chosen by --gateway / $TOLLGATE_GATEWAY / the last login.
 * The token comes from $TOLLGATE_TOKEN (e.g. the operator token) or the stored login;
 * never from the command line, where other users could read it in the process list.
 */
export function gatewayClient(
  env: Record<string, string | undefined>,
  gatewayFlag: string | undefined,
  opts: ClientOptions = {},
): GatewayClient {
  const gateway = resolveGateway(env, gatewayFlag);
  const url = new URL(gateway);
  // Every provider call carries a token, and login receives one: neither may cross a network in clear.
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !(opts.auth === false && opts.noToken)) {
    throw new CliError(`refusing to talk to ${gateway} over plain http: use https (http is for 127.0.0.1)`);
  }
  let token: string | undefined;
  if (opts.auth !== false) {
    token = env['TOLLGATE_TOKEN'] || readCredentials(env).gateways[gateway]?.accessToken;
    if (!token) throw new CliError(`not logged in to ${gateway}: run \`tollgate login\` first`);
  }
  return {
    gateway,
    async request<T>(method: string, path: string, body?: unknown): Promise<T> {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (token) headers['authorization'] = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      let res: Response;
      try {
        res = await fetch(`${gateway}${path}`, {
          method,
          headers,
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          redirect: 'error',
        });
      } catch (e) {
        const cause = (e as Error).cause as Error | undefined;
        throw new CliError(`cannot reach ${gateway}: ${cause?.message ?? (e as Error).message}`);
      }
      if (res.status === 204) return undefined as T;
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        throw new CliError(`${gateway} answered ${res.status} with a body that is not JSON`);
      }
      if (!res.ok) {
        const e = (json ?? {}) as { error?: string; message?: string; reason?: string };
        throw new GatewayError(
          res.status,
          e.error ?? `http_${res.status}`,
          e.message ?? res.statusText,
          e.reason,
        );
      }
      return json as T;
    },
  };
}

export interface ClientOptions {
  /** Send the stored token (default true). */
  auth?: boolean;
  /**
   * With `auth: false`: no token goes either way (e.g. the sandbox faucet), so plain http
   * to any host is allowed. Login receives a token and must not set it.
   */
  noToken?: boolean;
}

/** The client a command's flags ask for: `gatewayClient` with its `--gateway`. */
export function clientFor(io: CliIo, values: ParsedValues, opts: ClientOptions = {}): GatewayClient {
  return gatewayClient(io.env, optionalString(values, 'gateway'), opts);
}
