/**
 * The sandbox chains in their own process (they stand in for remote RPC nodes, so
 * their CPU must not count as the gateway's): the Solana JSON-RPC sandbox, the Sui
 * gRPC-web sandbox, and a loopback control port for the faucet, which the sandbox
 * only offers in-process. POST /faucet {chain, owner, usdcAtomic} funds a wallet.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSolanaSandbox, startSuiSandbox } from '@tollgate/sandbox';
import { announce, exitOnSignal } from './announce.ts';

const [solana, sui] = await Promise.all([startSolanaSandbox(), startSuiSandbox()]);

const control = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => {
    body += d.toString();
  });
  req.on('end', async () => {
    try {
      if (req.method !== 'POST' || req.url !== '/faucet')
        throw new Error(`no route ${req.method} ${req.url}`);
      const { chain, owner, usdcAtomic } = JSON.parse(body) as {
        chain: string;
        owner: string;
        usdcAtomic: string;
      };
      if (chain === 'solana') await solana.faucet(owner, BigInt(usdcAtomic));
      else if (chain === 'sui') sui.faucet(owner, BigInt(usdcAtomic));
      else throw new Error(`unknown chain ${chain}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    } catch (e) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: (e as Error).message }));
    }
  });
});
control.listen(0, '127.0.0.1', () => {
  announce({
    solanaUrl: solana.url,
    suiUrl: sui.url,
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
  });
});
exitOnSignal(async () => {
  control.close();
  await Promise.allSettled([solana.close(), sui.close()]);
});
