/**
 * A loopback x402 facilitator that only answers GET /supported (what
 * @x402/express asks once at startup): `exact` on Solana mainnet with a fee payer.
 * It counts every call, so the report can show that no 402 touched it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FacilitatorStub {
  url: string;
  calls: Record<string, number>;
  close(): Promise<void>;
}

export async function startFacilitatorStub(network: string, feePayer: string): Promise<FacilitatorStub> {
  const calls: Record<string, number> = {};
  const supported = JSON.stringify({
    kinds: [{ x402Version: 2, scheme: 'exact', network, extra: { feePayer } }],
    extensions: [],
    signers: { 'solana:*': [feePayer] },
  });
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    calls[path] = (calls[path] ?? 0) + 1;
    req.resume();
    if (req.method === 'GET' && path === '/supported') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(supported);
    } else {
      res
        .writeHead(501, { 'content-type': 'application/json' })
        .end('{"error":"the bench stub only answers /supported"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
