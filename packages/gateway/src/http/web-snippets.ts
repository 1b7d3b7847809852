/**
 * Copy-paste snippets for one endpoint on the directory's detail page: `curl -i` (shows
 * the 402), `payFetch` from @tollgate/client, and a stock x402 v2 client for projects
 * that accept one. Strings from the catalogue are quoted for their language (shell
 * single quotes, JSON string literals in JavaScript), then HTML-escaped by the page.
 */
import type { Chain } from '../store/store.ts';

export interface SnippetInput {
  method: string;
  /** The full protected URL (`<public base>/p/<slug>/<path>`). */
  url: string;
  /** The largest total the endpoint asks on any chain, as a decimal USDC string. */
  maxTotal: string;
  chains: readonly Chain[];
  network: 'localnet' | 'mainnet';
}

const HAS_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** A shell word in single quotes: `it's` → `'it'\''s'`. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

export function curlSnippet(s: SnippetInput): string {
  const parts = ['curl -i'];
  if (s.method === 'HEAD') parts[0] = 'curl -I';
  else if (s.method !== 'GET') parts.push(`-X ${s.method}`);
  if (HAS_BODY.has(s.method)) parts.push(`-H 'content-type: application/json' -d '{}'`);
  parts.push(shellQuote(s.url));
  return parts.join(' ');
}

function fetchInit(method: string): string {
  if (method === 'GET') return '';
  if (HAS_BODY.has(method)) {
    return `, {\n  method: ${JSON.stringify(method)},\n  headers: { 'content-type': 'application/json' },\n  body: JSON.stringify({}),\n}`;
  }
  return `, { method: ${JSON.stringify(method)} }`;
}

/** Public RPC endpoints on mainnet; elsewhere (the sandbox) the node's URL comes from /sandbox/info. */
function rpcUrl(chain: Chain, network: SnippetInput['network']): string {
  if (network === 'mainnet') {
    return JSON.stringify(
      chain === 'solana' ? 'https://api.mainnet-beta.solana.com' : 'https://fullnode.mainnet.sui.io:443',
    );
  }
  return `process.env.${chain === 'solana' ? 'SOLANA' : 'SUI'}_RPC_URL`;
}

function rpcComment(network: SnippetInput['network']): string {
  return network === 'mainnet' ? '' : " // the sandbox's node: GET /sandbox/info";
}

export function payFetchSnippet(s: SnippetInput): string {
  const chain: Chain = s.chains.includes('solana') ? 'solana' : 'sui';
  const wallet =
    chain === 'solana'
      ? `import { loadSolanaKeyFile, payFetch, solanaWallet } from '@tollgate/client';

const wallet = solanaWallet({
  secretKey: loadSolanaKeyFile(\`\${process.env.HOME}/.config/solana/id.json\`),
  rpcUrl: ${rpcUrl('solana', s.network)},${rpcComment(s.network)}
});`
      : `import { loadSuiKeyFile, payFetch, suiWallet } from '@tollgate/client';

const wallet = suiWallet({
  secretKey: loadSuiKeyFile(\`\${process.env.HOME}/.sui/sui_config/sui.keystore\`),
  rpcUrl: ${rpcUrl('sui', s.network)},${rpcComment(s.network)}
});`;
  return `${wallet}
const pay = payFetch(fetch, { wallets: [wallet], maxPerRequest: ${JSON.stringify(s.maxTotal)} });

const res = await pay(${JSON.stringify(s.url)}${fetchInit(s.method)});
console.log(res.status, await res.text());`;
}

/** Only for projects that accept stock x402 v2 clients (`exact` on Solana). */
export function stockX402Snippet(s: SnippetInput): string {
  return `import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { toClientSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';

// signer: your @solana/kit KeyPairSigner holding USDC (the gateway pays the SOL fee).${
    s.network === 'mainnet'
      ? ''
      : '\n// Sandbox: SOLANA_RPC_URL from GET /sandbox/info; examples/stock-x402-client.mjs runs the whole flow.'
  }
const client = new x402Client().register(
  'solana:*',
  new ExactSvmScheme(toClientSvmSigner(signer), { rpcUrl: ${rpcUrl('solana', s.network)} }),
);
const res = await wrapFetchWithPayment(fetch, client)(${JSON.stringify(s.url)}${fetchInit(s.method)});
console.log(res.status, await res.text());`;
}
