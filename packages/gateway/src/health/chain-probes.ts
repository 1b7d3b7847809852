/**
 * Readiness checks of the configured chain nodes: the lightest call each answers.
 * Solana: `getHealth` (a node that is behind answers an error). Sui: the ledger
 * service's GetServiceInfo, asked directly (the SDK caches getChainIdentifier forever,
 * which would hide a node that went down).
 */
import type { Config } from '../config.ts';
import type { ReadinessCheck } from './readiness.ts';

export function chainChecks(
  config: Pick<Config, 'solanaRpcUrl' | 'suiRpcUrl' | 'chainNetwork'>,
): ReadinessCheck[] {
  const checks: ReadinessCheck[] = [];
  const { solanaRpcUrl, suiRpcUrl } = config;
  if (solanaRpcUrl) {
    let rpc: ReturnType<typeof import('@solana/kit').createSolanaRpc> | undefined;
    checks.push({
      name: 'solana',
      async run(signal) {
        if (!rpc) rpc = (await import('@solana/kit')).createSolanaRpc(solanaRpcUrl);
        await rpc.getHealth().send({ abortSignal: signal });
      },
    });
  }
  if (suiRpcUrl) {
    let client: import('@mysten/sui/grpc').SuiGrpcClient | undefined;
    checks.push({
      name: 'sui',
      async run(signal) {
        if (!client) {
          const { SuiGrpcClient } = await import('@mysten/sui/grpc');
          client = new SuiGrpcClient({ network: config.chainNetwork, baseUrl: suiRpcUrl });
        }
        await client.ledgerService.getServiceInfo({}, { abort: signal });
      },
    });
  }
  return checks;
}
