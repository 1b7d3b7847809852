/**
 * Baseline for the 402 path: express 5 with the official `@x402/express`
 * middleware protecting `GET /p/bench/*` at $0.01 (exact, Solana mainnet USDC),
 * priced by the official `@x402/svm` exact server scheme (its own USDC mint table;
 * no blockhash lookup, as no rpcUrl is given). Its facilitator client is the stock
 * HTTPFacilitatorClient pointed at the bench's loopback stub (BENCH_FACILITATOR_URL),
 * which it asks for /supported once at start.
 */
import type { AddressInfo } from 'node:net';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import express from 'express';
import { announce, exitOnSignal } from './announce.ts';

const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';

const facilitatorUrl = process.env['BENCH_FACILITATOR_URL'];
const payTo = process.env['BENCH_PAY_TO'];
if (!facilitatorUrl || !payTo) throw new Error('BENCH_FACILITATOR_URL and BENCH_PAY_TO are required');

const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
  SOLANA_MAINNET,
  new ExactSvmScheme(),
);

const app = express();
app.disable('x-powered-by');
app.use(
  paymentMiddleware(
    {
      'GET /p/bench/*': {
        accepts: { scheme: 'exact', price: '$0.01', network: SOLANA_MAINNET, payTo },
        description: 'GET paid',
        mimeType: 'application/json',
      },
    },
    resourceServer,
  ),
);
app.get('/p/bench/{*rest}', (_req, res) => {
  res.json({ ok: true });
});

const server = app.listen(0, '127.0.0.1', () => {
  announce({ port: (server.address() as AddressInfo).port });
});
server.keepAliveTimeout = 60_000;
exitOnSignal(() => new Promise((r) => server.close(r)));
