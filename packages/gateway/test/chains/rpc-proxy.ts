/**
 * A loopback HTTP proxy in front of a sandbox chain's RPC (Solana JSON-RPC or Sui
 * gRPC-web, both plain HTTP POSTs): counts the requests the verifier makes, and can
 * hold them (as a stalled node would) to measure how many are in flight at once.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcProxy {
  readonly url: string;
  /** Requests received so far. */
  readonly calls: number;
  /** Most requests in flight at the same time so far. */
  readonly maxInFlight: number;
  /** Requests waiting while held. */
  readonly waiting: number;
  /** From now on, requests wait (unanswered) until release(). */
  hold(): void;
  /** Lets every held request through, and stops holding. */
  release(): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  'connection',
  'content-length',
  'content-encoding',
  'host',
  'keep-alive',
  'transfer-encoding',
]);

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let held: (() => void)[] | null = null;

  const server = createServer(async (req, res) => {
    calls++;
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (held) await new Promise<void>((resolve) => held!.push(resolve));
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (!HOP_BY_HOP.has(k) && typeof v === 'string') headers.set(k, v);
      }
      const upstream = await fetch(new URL(req.url ?? '/', target), {
        method: req.method ?? 'POST',
        headers,
        ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
      });
      const body = Buffer.from(await upstream.arrayBuffer());
      upstream.headers.forEach((v, k) => {
        if (!HOP_BY_HOP.has(k)) res.setHeader(k, v);
      });
      res.statusCode = upstream.status;
      res.end(body);
    } catch (e) {
      res.statusCode = 502;
      res.end(String(e));
    } finally {
      inFlight--;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const release = () => {
    const waiting = held ?? [];
    held = null;
    for (const go of waiting) go();
  };
  return {
    url,
    get calls() {
      return calls;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get waiting() {
      return held?.length ?? 0;
    },
    hold() {
      held ??= [];
    },
    release,
    close() {
      release();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
