/**
 * The processes both benches start first, each pinned: the sandbox chains, the reference
 * upstream and the minimal node:http + undici forwarder (bench/servers/); and the bare 402
 * server replaying a gateway's 402. Used by
 * `npm run bench` (bench/lib/stack.ts) and `npm run bench:scaling` (bench/lib/scaling-stack.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Child, spawnPinned } from './children.ts';

const SERVERS = new URL('../servers/', import.meta.url).pathname;

/** The node binary running the bench; every server runs on it. */
export const node = process.execPath;
/** Path of a server script in bench/servers/. */
export const server = (name: string) => join(SERVERS, name);

export interface BaseStack {
  chains: Child;
  upstream: Child;
  floor: Child;
  solanaRpcUrl: string;
  suiRpcUrl: string;
  faucetUrl: string;
  upstreamBase: string;
  floorBase: string;
}

/** Chains on `chainCpu`, the upstream on `upstreamCpu`, the minimal forwarder on `floorCpu`. */
export async function startBase(o: {
  chainCpu: string;
  upstreamCpu: string;
  floorCpu: string;
  /** More node flags for the minimal forwarder (--perf: `--perf-basic-prof`). */
  nodeFlags?: readonly string[];
}): Promise<BaseStack> {
  const chains = await spawnPinned({
    name: 'chains',
    cpu: o.chainCpu,
    command: node,
    args: [server('chains.ts')],
  });
  const upstream = await spawnPinned({
    name: 'upstream',
    cpu: o.upstreamCpu,
    command: node,
    args: [server('upstream.ts')],
  });
  const upstreamBase = `http://127.0.0.1:${upstream.info['port']}`;
  const floor = await spawnPinned({
    name: 'undici-forward',
    cpu: o.floorCpu,
    command: node,
    args: [...(o.nodeFlags ?? []), server('undici-forward.ts')],
    env: { BENCH_UPSTREAM_URL: upstreamBase },
  });
  return {
    chains,
    upstream,
    floor,
    solanaRpcUrl: String(chains.info['solanaUrl']),
    suiRpcUrl: String(chains.info['suiUrl']),
    faucetUrl: String(chains.info['controlUrl']),
    upstreamBase,
    floorBase: `http://127.0.0.1:${floor.info['port']}`,
  };
}

/** Header set of a response without the per-connection ones (date, keep-alive, length). */
export function stableHeaders(res: Response): Record<string, string> {
  const skip = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!skip.has(k)) out[k] = v;
  });
  return out;
}

/**
 * The bare node:http server (bench/servers/bare-402.ts) on `cpu`, replaying a gateway's
 * 402 `body` with its `headers` (written to `dir` for it to read).
 */
export async function spawnBare402(o: {
  cpu: string;
  dir: string;
  body: Buffer;
  headers: Record<string, string>;
}): Promise<Child> {
  writeFileSync(join(o.dir, '402-body.json'), o.body);
  writeFileSync(join(o.dir, '402-headers.json'), JSON.stringify(o.headers));
  return spawnPinned({
    name: 'bare-402',
    cpu: o.cpu,
    command: node,
    args: [server('bare-402.ts')],
    env: {
      BENCH_402_BODY_FILE: join(o.dir, '402-body.json'),
      BENCH_402_HEADERS_FILE: join(o.dir, '402-headers.json'),
    },
  });
}
