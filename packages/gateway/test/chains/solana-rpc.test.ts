/**
 * The Solana JSON-RPC client (chains/solana/rpc.ts) against a real local HTTP server: what a
 * call gives back, how it fails, how its signal ends it, and what it leaves in the heap.
 */
import { getEventListeners, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createJsonRpc, JsonRpcError } from '../../src/chains/solana/rpc.ts';
import { oldBytesPerAsyncCall } from '../support/old-generation.ts';

let server: Server | null = null;

async function serve(
  handler: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<string> {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => handler(req, Buffer.concat(parts).toString('utf8'), res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc?key=k`;
}

afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = null;
});

const never = () => new AbortController().signal;

describe('createJsonRpc', () => {
  it('posts one JSON-RPC request to the node’s path and gives back the result, whatever its chunking', async () => {
    const seen: { url?: string; method?: string; type?: string; body?: unknown } = {};
    const url = await serve((req, body, res) => {
      Object.assign(seen, { url: req.url, method: req.method, type: req.headers['content-type'] });
      seen.body = JSON.parse(body);
      // A multi-byte character split across two writes.
      const text = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"memo":"päid ✓"}}');
      const cut = text.indexOf(0xe2) + 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(text.subarray(0, cut));
      setTimeout(() => res.end(text.subarray(cut)), 10);
    });
    const rpc = createJsonRpc(url);
    await expect(rpc.call('getTransaction', ['sig', { encoding: 'json' }], never())).resolves.toEqual({
      memo: 'päid ✓',
    });
    expect(seen).toMatchObject({ url: '/rpc?key=k', method: 'POST', type: 'application/json' });
    expect(seen.body).toMatchObject({
      jsonrpc: '2.0',
      method: 'getTransaction',
      params: ['sig', { encoding: 'json' }],
    });
  });

  it('refuses an answer that is not 200, and the next call still goes through', async () => {
    let calls = 0;
    const url = await serve((_req, _body, res) => {
      calls++;
      if (calls === 1) res.writeHead(503, { 'content-type': 'text/html' }).end('<html>busy</html>');
      else res.writeHead(200).end('{"jsonrpc":"2.0","id":2,"result":7}');
    });
    const rpc = createJsonRpc(url);
    await expect(rpc.call('getSlot', [], never())).rejects.toThrow(new JsonRpcError('HTTP 503'));
    await expect(rpc.call('getSlot', [], never())).resolves.toBe(7);
  });

  it('gives the node’s JSON-RPC error as a JsonRpcError', async () => {
    const url = await serve((_req, _body, res) =>
      res.writeHead(200).end('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}'),
    );
    await expect(createJsonRpc(url).call('getSlot', [], never())).rejects.toThrow(/-32602: Invalid params/);
  });

  it('ends the exchange with the signal’s reason, before it starts and while the answer drips', async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200);
      res.write('{"jsonrpc":"2.0","id":1,"result":');
      // …and nothing more, ever.
    });
    const rpc = createJsonRpc(url);
    const before = new AbortController();
    before.abort(new Error('too late already'));
    await expect(rpc.call('getSlot', [], before.signal)).rejects.toThrow('too late already');

    const during = new AbortController();
    const pending = rpc.call('getSlot', [], during.signal);
    setTimeout(() => during.abort(new Error('deadline')), 50);
    await expect(pending).rejects.toThrow('deadline');
  });

  it('ends a call aborted while it waits for its connection, before anything is sent', async () => {
    let requests = 0;
    const url = await serve((_req, _body, res) => {
      requests++;
      res.writeHead(200).end('{"jsonrpc":"2.0","id":1,"result":1}');
    });
    const rpc = createJsonRpc(url);
    const ac = new AbortController();
    const pending = rpc.call('getSlot', [], ac.signal);
    ac.abort(new Error('gone while queued')); // the connection is still being made
    await expect(pending).rejects.toThrow('gone while queued');
    await expect(rpc.call('getSlot', [], never())).resolves.toBe(1);
    expect(requests).toBe(1);
  });

  it('leaves no listener on a signal it was given, whether the call succeeded or failed', async () => {
    let n = 0;
    const url = await serve((_req, _body, res) => {
      n++;
      if (n % 2 === 0) res.writeHead(500).end();
      else res.writeHead(200).end('{"jsonrpc":"2.0","id":1,"result":1}');
    });
    const rpc = createJsonRpc(url);
    const shared = new AbortController().signal;
    for (let i = 0; i < 4; i++) await rpc.call('getSlot', [], shared).catch(() => undefined);
    expect(n).toBe(4);
    expect(getEventListeners(shared, 'abort')).toHaveLength(0);
  });

  it('gives up on an answer larger than its bound', async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200);
      res.end(`{"jsonrpc":"2.0","id":1,"result":"${'x'.repeat(4096)}"}`);
    });
    await expect(createJsonRpc(url, { maxAnswerBytes: 1024 }).call('getSlot', [], never())).rejects.toThrow(
      /larger than 1024 bytes/,
    );
  });

  it('keeps nothing of its caller: the caller’s state is not promoted to the old generation', async () => {
    // Through undici's `request` API the caller's whole state outlived two scavenges and was
    // promoted: about 5 KB of old space per call here (the paid path's verification, in the bench).
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { data: 'x'.repeat(3000) } });
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
    const rpc = createJsonRpc(url);
    const perCall = await oldBytesPerAsyncCall(async () => {
      // What a paid request holds while it waits for the chain.
      const state = Array.from({ length: 40 }, (_, k) => ({ k, text: `${'q'.repeat(60)}${k}` }));
      const result = (await rpc.call('getTransaction', [], new AbortController().signal)) as { data: string };
      if (result.data.length + state.length !== 3040) throw new Error('wrong answer');
    }, 400);
    expect(perCall).toBeLessThan(1000);
  });
});
