/**
 * A local HTTP server speaking the OpenAI wire format (JSON and SSE) for the adapter
 * and route tests, with fault modes queued per request: fail with 500 before any
 * byte, cut the SSE stream after a few chunks, send an error event, hang, refuse the
 * request (400), or answer without usage. Records every request body it received.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FakeMode =
  | 'ok'
  | 'fail500'
  | 'cut'
  | 'error_event'
  | 'hang'
  | 'reject400'
  | 'no_usage'
  | 'unauthorized'
  | 'no_choices'
  | 'slow'
  /** Streams one word every 80 ms (a generation the client can leave midway). */
  | 'drip';

export interface FakeRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface FakeOpenAi {
  /** Base URL including /v1. */
  url: string;
  /** Modes for the next requests, consumed in order; 'ok' when empty. */
  queue: FakeMode[];
  received: FakeRequest[];
  /** Words the fake model answers with (before max_tokens truncation, one token each). */
  words: string[];
  /** How long 'slow' waits before answering, ms. */
  slowMs: number;
  close(): Promise<void>;
}

export const FAKE_PROMPT_TOKENS = 42;

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const sockets = new Set<Socket>();
  const fake: FakeOpenAi = {
    url: '',
    queue: [],
    received: [],
    words: ['Hello', ' from', ' the', ' fake', ' upstream', ' model', '.'],
    slowMs: 1500,
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      const path = (req.url ?? '').replace(/^\/v1/, '');
      fake.received.push({ path, headers: req.headers, body });
      const mode = fake.queue.shift() ?? 'ok';
      if (mode === 'hang') return;
      if (mode === 'slow') return void setTimeout(() => answer(mode, path, body), fake.slowMs);
      answer(mode, path, body);
    });
    const answer = (mode: FakeMode, path: string, body: Record<string, unknown>): void => {
      if (mode === 'fail500')
        return void res
          .writeHead(500, { 'content-type': 'application/json' })
          .end('{"error":{"message":"boom"}}');
      if (mode === 'unauthorized')
        return void res
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"error":{"message":"bad key"}}');
      if (mode === 'reject400') {
        return void res.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: { message: 'stop sequence not supported', type: 'invalid_request_error', param: 'stop' },
          }),
        );
      }
      if (mode === 'no_choices')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"surprise":true}');
      if (path === '/embeddings') return void embeddings(res, body);
      const max = Number(body.max_tokens ?? body.max_completion_tokens ?? 16);
      const words = fake.words.slice(0, max);
      const usage = {
        prompt_tokens: FAKE_PROMPT_TOKENS,
        completion_tokens: words.length,
        total_tokens: FAKE_PROMPT_TOKENS + words.length,
      };
      const finish = words.length < fake.words.length ? 'length' : 'stop';
      const base = { id: 'chatcmpl-fake', created: 1_700_000_000, model: String(body.model) };
      if (body.stream !== true) {
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            ...base,
            object: 'chat.completion',
            choices: [
              { index: 0, message: { role: 'assistant', content: words.join('') }, finish_reason: finish },
            ],
            ...(mode === 'no_usage' ? {} : { usage }),
          }),
        );
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': keep-alive comment\n\n');
      const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      const chunk = (delta: object, finish_reason: string | null = null) =>
        send({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] });
      chunk({ role: 'assistant', content: '' });
      const finishStream = () => {
        chunk({}, finish);
        const include = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
        if (include && mode !== 'no_usage')
          send({ ...base, object: 'chat.completion.chunk', choices: [], usage });
        res.end('data: [DONE]\n\n');
      };
      if (mode === 'drip') {
        const next = (i: number) => {
          if (res.destroyed) return;
          if (i >= words.length) return finishStream();
          chunk({ content: words[i] });
          setTimeout(() => next(i + 1), 80);
        };
        return void next(0);
      }
      for (const [i, w] of words.entries()) {
        // Let the first chunks reach the client, then drop the connection mid-stream.
        if (i === 2 && mode === 'cut') return void setTimeout(() => req.socket.destroy(), 30);
        if (i === 2 && mode === 'error_event') {
          send({ error: { message: 'provider overloaded', code: 502 } });
          return void res.end();
        }
        chunk({ content: w });
      }
      finishStream();
    };
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return fake;
}

function embeddings(res: import('node:http').ServerResponse, body: Record<string, unknown>): void {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      object: 'list',
      data: inputs.map((_, index) => ({
        object: 'embedding',
        index,
        embedding: [0.1 * (index + 1), 0.2, 0.3],
      })),
      model: String(body.model),
      usage: { prompt_tokens: 7, total_tokens: 7 },
    }),
  );
}
