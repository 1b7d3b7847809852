/** `tollgate balance` (a payer wallet's USDC and SOL/SUI) and `tollgate faucet` (sandbox only). */
import { parseAmount } from '@tollgate/protocol';
import { readBalances } from '../balances.ts';
import { addressFrom, chainOf, nodeFor } from '../chain-options.ts';
import { type CliCommand, CliError, optionalString, UsageError } from '../command.ts';
import { clientFor, GatewayError } from '../http.ts';

const WHO = {
  chain: { type: 'string' },
  key: { type: 'string' },
  address: { type: 'string' },
} as const;

const balance: CliCommand = {
  name: 'balance',
  summary: "show a payer wallet's USDC, and its SOL or SUI for fees",
  usage: '--chain sui|solana (--key <file> | --address <address>) [--rpc <url>]',
  details: [
    "Read from the chain's node: --rpc, else $SOLANA_RPC_URL / $SUI_RPC_URL, else the node of the sandbox",
    'gateway (--gateway, $TOLLGATE_GATEWAY, the last login). Prints { chain, address, usdc, sol|sui }.',
    'With a Sui keystore holding several keys, --address picks one.',
  ].join('\n'),
  options: { ...WHO, rpc: { type: 'string' } },
  async run(io, values) {
    const chain = chainOf(values);
    const address = addressFrom(chain, values);
    const node = await nodeFor(chain, values, io.env);
    const balances = await readBalances(chain, node.rpcUrl, address, node.usdc);
    const native = balances.chain === 'solana' ? `${balances.sol} SOL` : `${balances.sui} SUI`;
    io.err(`${chain} ${address}: ${balances.usdc} USDC, ${native}`);
    return balances;
  },
};

const faucet: CliCommand = {
  name: 'faucet',
  summary: "fund a wallet with test USDC (and SOL/SUI for fees) from a sandbox gateway's faucet",
  usage: '--chain sui|solana (--key <file> | --address <address>) [--amount <usdc>] [--sol <sol>]',
  details: [
    'Sandbox gateways only (`npm start` with no configuration): POST /sandbox/faucet.',
    '--amount defaults to 10 USDC (at most 1000). Solana wallets also get 1 SOL for fees unless --sol',
    'says otherwise (--sol 0 makes a payer that can only pay through the x402 v2 sponsor); Sui ones 10 SUI.',
  ].join('\n'),
  options: { ...WHO, amount: { type: 'string' }, sol: { type: 'string' } },
  async run(io, values) {
    const chain = chainOf(values);
    const address = addressFrom(chain, values);
    const body: Record<string, string> = { chain, address };
    const amount = optionalString(values, 'amount');
    const sol = optionalString(values, 'sol');
    if (amount !== undefined) {
      try {
        parseAmount(amount, 6);
      } catch {
        throw new UsageError('--amount must be a decimal USDC amount, e.g. 2.5');
      }
      body['amount'] = amount;
    }
    if (sol !== undefined) {
      if (chain !== 'solana') throw new UsageError('--sol is for Solana wallets');
      body['sol'] = sol;
    }
    const client = clientFor(io, values, { auth: false, noToken: true });
    let funded: { funded?: string };
    try {
      funded = await client.request<{ funded?: string }>('POST', '/sandbox/faucet', body);
    } catch (e) {
      if (e instanceof GatewayError && e.status === 404) {
        throw new CliError(`${client.gateway} is not a sandbox gateway: it has no faucet (${e.message})`);
      }
      throw e;
    }
    io.err(`funded ${chain} ${address} with ${funded.funded ?? '?'} USDC`);
    return funded;
  },
};

export const commands: CliCommand[] = [balance, faucet];
