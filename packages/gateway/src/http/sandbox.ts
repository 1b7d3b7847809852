/**
 * Sandbox-only helpers (never registered outside sandbox mode): where the local
 * chains are, a faucet, and balances, so a demo client needs nothing but the URL.
 */
import { formatAmount, parseAmount, solanaCaip2 } from '@tollgate/protocol';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import type { SandboxChains } from '../sandbox-mode.ts';

const MAX_FAUCET_USDC = 1000n * 1_000_000n;

export function sandboxRoutes(app: FastifyInstance, deps: Deps, chains: SandboxChains): void {
  app.get('/sandbox/info', async () => ({
    network: deps.config.chainNetwork,
    solana: {
      rpcUrl: chains.solana.url,
      mint: chains.solana.mint,
      // The local chain presents devnet's identity, so stock x402 clients can pay it.
      caip2: solanaCaip2(chains.solana.genesisHash),
    },
    sui: { rpcUrl: chains.sui.url, coinType: chains.sui.coinType },
    platform: { solana: deps.config.platformSolanaAddress, sui: deps.config.platformSuiAddress },
    demoApi: chains.demoApi.url,
  }));

  app.post<{ Body: { chain: 'sui' | 'solana'; address: string; amount?: string; sol?: string } }>(
    '/sandbox/faucet',
    {
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['chain', 'address'],
          properties: {
            chain: { enum: ['sui', 'solana'] },
            address: { type: 'string', minLength: 32, maxLength: 80 },
            amount: { type: 'string', maxLength: 24 },
            // Solana only: SOL for fees (default 1); '0' makes a payer that needs a sponsor.
            sol: { type: 'string', maxLength: 24 },
          },
        },
      },
    },
    async (request) => {
      const { chain, address } = request.body;
      let atomic: bigint;
      try {
        atomic = parseAmount(request.body.amount ?? '10', 6);
      } catch {
        throw new ApiError('invalid_request', 'amount must be a decimal USDC amount');
      }
      if (atomic > MAX_FAUCET_USDC)
        throw new ApiError('invalid_request', 'the faucet gives at most 1000 USDC at a time');
      let lamports: bigint | undefined;
      if (request.body.sol !== undefined) {
        try {
          lamports = parseAmount(request.body.sol, 9);
        } catch {
          throw new ApiError('invalid_request', 'sol must be a decimal SOL amount');
        }
        if (chain !== 'solana') throw new ApiError('invalid_request', 'sol is for Solana wallets only');
        if (lamports > 100n * 1_000_000_000n)
          throw new ApiError('invalid_request', 'the faucet gives at most 100 SOL');
      }
      try {
        if (chain === 'solana' && lamports !== undefined)
          await chains.solana.faucet(address, atomic, lamports);
        else await chains[chain].faucet(address, atomic);
      } catch (e) {
        throw new ApiError('invalid_request', `faucet failed: ${(e as Error).message}`);
      }
      return { chain, address, funded: formatAmount(atomic, 6), asset: 'USDC' };
    },
  );

  app.get<{ Querystring: { chain: 'sui' | 'solana'; address: string } }>(
    '/sandbox/balances',
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['chain', 'address'],
          properties: {
            chain: { enum: ['sui', 'solana'] },
            address: { type: 'string', minLength: 32, maxLength: 80 },
          },
        },
      },
    },
    async (request) => {
      const { chain, address } = request.query;
      const usdc = await chains[chain].usdcBalance(address).catch(() => 0n);
      return { chain, address, usdc: formatAmount(usdc, 6) };
    },
  );
}
