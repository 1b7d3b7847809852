// A stock x402 v2 client (@x402/fetch + @x402/svm) buying from the sandbox: `npm start`, then `node examples/stock-x402-client.mjs`.
import { generateKeyPairSigner } from '@solana/kit';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { toClientSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';

const base = process.env.TOLLGATE_URL ?? 'http://127.0.0.1:8402';
const { solana } = await (await fetch(`${base}/sandbox/info`)).json(); // sandbox only: its RPC, mint and CAIP-2 id
const signer = await generateKeyPairSigner();
const fund = { chain: 'solana', address: signer.address, amount: '1', sol: '0' }; // 1 USDC and no SOL: the gateway pays the fee
await fetch(`${base}/sandbox/faucet`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(fund),
});
const client = new x402Client()
  .register('solana:*', new ExactSvmScheme(toClientSvmSigner(signer), { rpcUrl: solana.rpcUrl }))
  .setSpendControls({
    allowedAssets: [{ network: solana.caip2, asset: solana.mint, maxAmountPerPayment: '100000' }],
  });
const res = await wrapFetchWithPayment(fetch, client)(`${base}/p/demo/weather?city=Oslo`);
console.log(res.status, res.headers.get('payment-response') ? 'paid' : 'not paid', await res.json());
