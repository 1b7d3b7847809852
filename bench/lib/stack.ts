/**
 * Starts everything the scenarios need, each in its own pinned process: the sandbox
 * chains, the reference upstream, the real gateway, the bare 402 server, the minimal 402
 * server, the @x402/express server (with its facilitator stub), nginx, a minimal node:http +
 * undici forwarder (a reference for what Node itself costs) and the minimal paid server.
 * Then checks that each answers what its scenario expects before anything is timed.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newSolanaKey, newSuiKey } from '@tollgate/client';
import { EMPTY_BODY_SHA256 } from '@tollgate/protocol';
import { deriveKey } from '../../packages/gateway/src/crypto/keys.ts';
import { requestHashFor } from '../../packages/gateway/src/payments/requirement.ts';
import {
  createRequirementTokens,
  type RequirementClaims,
} from '../../packages/gateway/src/payments/requirement-token.ts';
import { NODE_LAUNCH_FLAGS } from '../../packages/gateway/src/startup/v8-tuning.ts';
import { node, server, spawnBare402, stableHeaders, startBase } from './base-servers.ts';
import { type Child, spawnPinned } from './children.ts';
import { type FacilitatorStub, startFacilitatorStub } from './facilitator-stub.ts';
import { freePort } from './net.ts';
import { startNginx } from './nginx.ts';

const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';

export interface StackOptions {
  dir: string;
  nginxBinary: string;
  serverCpu: string;
  upstreamCpu: string;
  chainCpu: string;
  logLevel: string;
  databaseUrl: string;
  /** Active health-check interval for the gateway (0 = off, null = its default). */
  healthIntervalMs: number | null;
  profileDir?: string;
  /** More node flags for the gateway and the minimal servers (--perf: `--perf-basic-prof`). */
  nodeFlags?: readonly string[];
  /** More node flags for the gateway alone (--gateway-flags); its stdout then goes to `gatewayStdout`. */
  gatewayFlags?: readonly string[];
  gatewayStdout?: string;
  log: (line: string) => void;
}

export interface Stack {
  chains: Child;
  upstream: Child;
  gateway: Child;
  bare402: Child;
  /** The minimal 402 server (bench/servers/minimal-402.ts), issuing the gateway's tokens. */
  lean402: Child;
  x402: Child;
  nginx: Child;
  floor: Child;
  /** The minimal paid server (bench/servers/minimal-paid.ts), checking the gateway's tokens. */
  paidFloor: Child;
  /** The same server keeping its redemptions in the gateway's store (BENCH_RECORD=tollgate). */
  paidRecord: Child;
  facilitator: FacilitatorStub;
  solanaRpcUrl: string;
  faucetUrl: string;
  gatewayBase: string;
  upstreamBase: string;
  nginxBase: string;
  floorBase: string;
  paidFloorBase: string;
  paidRecordBase: string;
  bare402Url: string;
  lean402Url: string;
  x402Url: string;
  /** The gateway's 402 for GET /p/bench/paid: body bytes and header set. */
  challenge: { bytes: number; headerBytes: number; accepts: number };
}

async function expectResponse(
  url: string,
  status: number,
  minBytes: number,
  what: string,
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`${what}: ${url} is unreachable: ${(e as Error).message}`);
  }
  const body = await res.clone().arrayBuffer();
  if (res.status !== status || body.byteLength < minBytes) {
    throw new Error(
      `${what}: ${url} answered ${res.status} with ${body.byteLength} bytes, expected ${status} with ≥ ${minBytes}: ` +
        Buffer.from(body).subarray(0, 300).toString(),
    );
  }
  return res;
}

/**
 * The gateway's configuration in the bench (its environment, read by loadConfig): sandbox
 * chains, fresh platform addresses, loopback origins allowed. Free routes need price 0 and
 * fee 0; the paid route keeps the default 1 % fee. Also used by bench/anatomy.ts.
 */
export function benchGatewayEnv(o: {
  secret: string;
  dir: string;
  databaseUrl: string;
  solanaRpcUrl: string;
  suiRpcUrl: string;
  logLevel: string;
}): Record<string, string> {
  return {
    TOLLGATE_NETWORK: 'sandbox',
    TOLLGATE_SECRET: o.secret,
    TOLLGATE_DATA_DIR: o.dir,
    DATABASE_URL: o.databaseUrl,
    SOLANA_RPC_URL: o.solanaRpcUrl,
    SUI_RPC_URL: o.suiRpcUrl,
    PLATFORM_SOLANA_ADDRESS: newSolanaKey().address,
    PLATFORM_SUI_ADDRESS: newSuiKey().address,
    PLATFORM_FEE_MIN: '0',
    TOLLGATE_ALLOW_PRIVATE_ORIGINS: '1',
    LOG_LEVEL: o.logLevel,
  };
}

export async function startStack(o: StackOptions): Promise<Stack> {
  o.log(
    `starting servers (gateway, baselines and upstream on CPU ${o.serverCpu}/${o.upstreamCpu}, chains on CPU ${o.chainCpu})`,
  );
  const { chains, upstream, floor, upstreamBase, floorBase, ...base } = await startBase({
    chainCpu: o.chainCpu,
    upstreamCpu: o.upstreamCpu,
    floorCpu: o.serverCpu,
    nodeFlags: o.nodeFlags,
  });
  const flags = o.nodeFlags ?? [];

  // Shared with the minimal paid server, which checks the gateway's requirement tokens.
  const secret = randomBytes(32).toString('hex');
  const gateway = await spawnPinned({
    name: 'gateway',
    cpu: o.serverCpu,
    command: node,
    // Launched as npm start launches it. --expose-gc only defines gc(); the soak calls it
    // through the memory port, never under load.
    args: [...NODE_LAUNCH_FLAGS, '--expose-gc', ...flags, ...(o.gatewayFlags ?? []), server('gateway.ts')],
    ...(o.gatewayStdout ? { stdout: o.gatewayStdout } : {}),
    env: {
      ...benchGatewayEnv({
        secret,
        dir: o.dir,
        databaseUrl: o.databaseUrl,
        solanaRpcUrl: base.solanaRpcUrl,
        suiRpcUrl: base.suiRpcUrl,
        logLevel: o.logLevel,
      }),
      ...(o.healthIntervalMs === null ? {} : { TOLLGATE_HEALTH_INTERVAL_MS: String(o.healthIntervalMs) }),
      BENCH_UPSTREAM_URL: upstreamBase,
      BENCH_PROVIDER_SOLANA: newSolanaKey().address,
      BENCH_PROVIDER_SUI: newSuiKey().address,
      BENCH_MEMORY_REPORT: '1',
      ...(o.profileDir ? { BENCH_PROFILE_DIR: o.profileDir } : {}),
    },
  });
  const gatewayBase = `http://127.0.0.1:${gateway.info['port']}/p/bench`;

  // The bare baseline answers the gateway's own 402 bytes with the same header set.
  const first = await expectResponse(`${gatewayBase}/paid`, 402, 100, 'gateway 402');
  const body = Buffer.from(await first.arrayBuffer());
  const headers = stableHeaders(first);
  const requirement = JSON.parse(body.toString()) as { accepts?: unknown[] };
  const bare402 = await spawnBare402({ cpu: o.serverCpu, dir: o.dir, body, headers });
  // The minimal 402 server takes the quote from the same 402 and signs with the gateway's key.
  const lean402File = join(o.dir, 'minimal-402.json');
  writeFileSync(lean402File, JSON.stringify({ body: body.toString(), headers, path: '/p/bench/paid' }));
  const lean402 = await spawnPinned({
    name: 'minimal-402',
    cpu: o.serverCpu,
    command: node,
    args: [...flags, server('minimal-402.ts')],
    env: { BENCH_402_FILE: lean402File, BENCH_TOKEN_SECRET: secret },
  });

  const feePayer = newSolanaKey().address;
  const facilitator = await startFacilitatorStub(SOLANA_MAINNET, feePayer);
  const x402 = await spawnPinned({
    name: 'x402-express',
    cpu: o.serverCpu,
    command: node,
    args: [server('x402-express.ts')],
    env: { BENCH_FACILITATOR_URL: facilitator.url, BENCH_PAY_TO: newSolanaKey().address },
  });

  const minimalPaid = (name: string, record: 'minimal' | 'tollgate') =>
    spawnPinned({
      name,
      cpu: o.serverCpu,
      command: node,
      args: [...flags, server('minimal-paid.ts')],
      env: {
        BENCH_UPSTREAM_URL: upstreamBase,
        BENCH_SOLANA_RPC_URL: base.solanaRpcUrl,
        BENCH_TOKEN_SECRET: secret,
        BENCH_DB_FILE: join(o.dir, `${name}.sqlite`),
        BENCH_RECORD: record,
      },
    });
  const paidFloor = await minimalPaid('minimal-paid', 'minimal');
  const paidRecord = await minimalPaid('minimal-paid-record', 'tollgate');

  const nginxPort = await freePort();
  const nginx = await startNginx({
    binary: o.nginxBinary,
    dir: join(o.dir, 'nginx'),
    port: nginxPort,
    upstreamPort: Number(upstream.info['port']),
    cpu: o.serverCpu,
  });
  const nginxBase = `http://127.0.0.1:${nginxPort}`;

  const stack: Stack = {
    chains,
    upstream,
    gateway,
    bare402,
    lean402,
    x402,
    nginx,
    floor,
    paidFloor,
    paidRecord,
    facilitator,
    solanaRpcUrl: base.solanaRpcUrl,
    faucetUrl: base.faucetUrl,
    gatewayBase,
    upstreamBase,
    nginxBase,
    floorBase,
    paidFloorBase: `http://127.0.0.1:${paidFloor.info['port']}`,
    paidRecordBase: `http://127.0.0.1:${paidRecord.info['port']}`,
    bare402Url: `http://127.0.0.1:${bare402.info['port']}/p/bench/paid`,
    lean402Url: `http://127.0.0.1:${lean402.info['port']}/p/bench/paid`,
    x402Url: `http://127.0.0.1:${x402.info['port']}/p/bench/paid`,
    challenge: {
      bytes: body.length,
      headerBytes: Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0),
      accepts: requirement.accepts?.length ?? 0,
    },
  };

  // Every route answers what its scenario expects before anything is timed.
  await expectResponse(stack.bare402Url, 402, body.length, 'bare 402');
  const leanBytes = await checkMinimal402(stack.lean402Url, secret, body, headers);
  o.log(
    `minimal 402 server: its tokens verify with the gateway's key, sign the gateway's quote and bind the request; ` +
      `a new nonce per answer; body ${leanBytes.join(' and ')} B (the gateway's ${body.length} B)`,
  );
  const x = await expectResponse(stack.x402Url, 402, 0, '@x402/express');
  if (!x.headers.get('payment-required'))
    throw new Error('@x402/express answered 402 without PAYMENT-REQUIRED');
  const small = Number(upstream.info['smallBytes']);
  const big = Number(upstream.info['bigBytes']);
  for (const [base, what] of [
    [upstreamBase, 'upstream'],
    [nginxBase, 'nginx'],
    [floorBase, 'node:http + undici forwarder'],
  ] as const) {
    await expectResponse(`${base}/free`, 200, small, what);
    await expectResponse(`${base}/big`, 200, big, what);
  }
  await expectResponse(`${gatewayBase}/free`, 200, small, 'gateway free route');
  await expectResponse(`${gatewayBase}/big`, 200, big, 'gateway 256 KB route');
  return stack;
}

/**
 * The minimal paid server is a yardstick only if it checks what the gateway checks: before
 * anything is timed, it must refuse a request without payment, a proof whose token was
 * altered and a proof sent for another request, serve a real one, and replay it.
 */
export async function checkMinimalPaid(base: string, proofHeader: string, path: string): Promise<void> {
  const url = `${base}${path}`;
  const ask = async (u: string, header?: string) => {
    const res = await fetch(u, header ? { headers: { 'x-payment': header } } : {});
    return { status: res.status, body: await res.text() };
  };
  const proof = JSON.parse(Buffer.from(proofHeader, 'base64').toString('utf8')) as Record<string, string>;
  const token = String(proof['paymentRequirementId']);
  const flipped = token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.slice(-1);
  const forged = Buffer.from(JSON.stringify({ ...proof, paymentRequirementId: flipped })).toString('base64');
  const checks: [string, Promise<{ status: number; body: string }>, string][] = [
    ['no payment', ask(url), 'payment_required'],
    ['an altered token', ask(url, forged), 'requirement_forged'],
    ['a proof for another request', ask(`${url}?other=1`, proofHeader), 'request_mismatch'],
  ];
  for (const [what, answer, code] of checks) {
    const got = await answer;
    const error = got.status === 402 ? (JSON.parse(got.body) as { error?: unknown }).error : undefined;
    if (error !== code) {
      throw new Error(
        `minimal paid server: ${what} answered ${got.status} ${got.body.slice(0, 80)}, not 402 ${code}`,
      );
    }
  }
  const first = await ask(url, proofHeader);
  const again = await ask(url, proofHeader);
  if (first.status !== 200 || again.status !== 200 || again.body !== first.body) {
    throw new Error(`minimal paid server: a real proof answered ${first.status}, its replay ${again.status}`);
  }
  await resetMinimalPaid(base);
}

/** Empties a minimal paid server's redemptions (its base URL), so the same proofs are new to it again. */
export async function resetMinimalPaid(base: string): Promise<void> {
  const reset = await fetch(`${base}/__reset`, { method: 'POST' });
  if (!reset.ok) throw new Error(`minimal paid server: reset answered ${reset.status}`);
}

/**
 * The minimal 402 server is a yardstick only if its 402 is a real one: before anything is
 * timed, its token must verify with the gateway's key and bind this request (the hash the
 * gateway checks a retry against) and sign the gateway's quote, each answer must carry a new
 * nonce, and its body and headers must be the gateway's in size and names.
 */
async function checkMinimal402(
  url: string,
  secret: string,
  gatewayBody: Buffer,
  gatewayHeaders: Record<string, string>,
): Promise<number[]> {
  const tokens = createRequirementTokens([deriveKey(secret, 'requirement-token/v1')]);
  const fail = (why: string): never => {
    throw new Error(`minimal 402 server: ${why}`);
  };
  // The quote signed in (subject, price, fee, options without their memos) and the TTL: the gateway's.
  const quoteOf = (c: RequirementClaims) =>
    JSON.stringify(
      {
        scheme: c.scheme,
        subject: c.subject,
        price: c.price,
        fee: c.fee,
        v2: c.v2,
        ttlMs: c.expiresAtMs - c.issuedAtMs,
        options: c.options.map(({ memo: _memo, ...o }) => o),
      },
      (_k, v) => (typeof v === 'bigint' ? v.toString() : v),
    );
  const gatewayToken = tokens.verify(
    String((JSON.parse(gatewayBody.toString()) as { paymentRequirementId?: unknown }).paymentRequirementId),
  );
  if (!gatewayToken.ok) return fail(`the gateway's own token does not verify: ${gatewayToken.reason}`);
  const gatewayQuote = quoteOf(gatewayToken.claims);
  const nonces = new Set<string>();
  const sizes: number[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await expectResponse(url, 402, 100, 'minimal 402 server');
    const text = await res.text();
    let body: { nonce?: unknown; requestHash?: unknown; paymentRequirementId?: unknown };
    try {
      body = JSON.parse(text);
    } catch {
      return fail(`its 402 body is not JSON: ${text.slice(0, 200)}`);
    }
    const check = tokens.verify(String(body.paymentRequirementId));
    if (!check.ok)
      return fail(`its paymentRequirementId does not verify with the gateway's key: ${check.reason}`);
    const { claims } = check;
    const bound = requestHashFor(claims, {
      method: 'GET',
      pathWithQuery: '/p/bench/paid',
      bodySha256: EMPTY_BODY_SHA256,
    });
    if (claims.requestHash !== body.requestHash || bound !== body.requestHash)
      fail(
        `its requestHash ${body.requestHash} is not its token's (${claims.requestHash}) or this request's (${bound})`,
      );
    if (claims.nonce !== body.nonce) fail(`its nonce ${body.nonce} is not its token's (${claims.nonce})`);
    if (quoteOf(claims) !== gatewayQuote)
      fail(`its token signs ${quoteOf(claims)}, the gateway's ${gatewayQuote}`);
    if (Math.abs(claims.issuedAtMs - Date.now()) > 5_000)
      fail(`its token was issued at ${claims.issuedAtMs}`);
    nonces.add(claims.nonce);
    const bytes = Buffer.byteLength(text);
    sizes.push(bytes);
    if (Math.abs(bytes - gatewayBody.length) > 4)
      fail(`its body is ${bytes} bytes, the gateway's ${gatewayBody.length}`);
    const names = (h: Record<string, string>) => Object.keys(h).sort().join(', ');
    const own = stableHeaders(res);
    if (names(own) !== names(gatewayHeaders))
      fail(`its headers are ${names(own)}, the gateway's ${names(gatewayHeaders)}`);
    if (own['x-request-id'] === gatewayHeaders['x-request-id']) fail('it repeats the captured request id');
  }
  if (nonces.size !== 2) fail('two answers carried the same nonce');
  return sizes;
}
