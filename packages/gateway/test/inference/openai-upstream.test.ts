/** The OpenAI-compatible adapter against a local server speaking the wire format (JSON and SSE, with faults). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiUpstream } from '../../src/inference/upstreams/openai-http.ts';
import { type Json, UpstreamCut } from '../../src/inference/upstreams/upstream.ts';
import { FAKE_PROMPT_TOKENS, type FakeOpenAi, startFakeOpenAi } from './fake-openai.ts';

let fake: FakeOpenAi;
let upstream: ReturnType<typeof createOpenAiUpstream>;
const signal = () => new AbortController().signal;
const chat = (extra: Json = {}): Json => ({
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  max_tokens: 4,
  ...extra,
});

async function collect(chunks: AsyncIterable<Json>): Promise<Json[]> {
  const out: Json[] = [];
  for await (const c of chunks) out.push(c);
  return out;
}

beforeAll(async () => {
  fake = await startFakeOpenAi();
  upstream = createOpenAiUpstream({
    baseUrl: fake.url,
    apiKey: 'sk-test-123',
    timeoutMs: 1500,
    maxResponseBytes: 1 << 20,
  });
});
afterAll(() => fake.close());

describe('OpenAI-compatible upstream adapter', () => {
  it('posts JSON with the API key and returns the completion', async () => {
    const r = await upstream.complete(chat(), signal());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.object).toBe('chat.completion');
    expect(r.value.usage).toMatchObject({ prompt_tokens: FAKE_PROMPT_TOKENS, completion_tokens: 4 });
    const got = fake.received.at(-1)!;
    expect(got.path).toBe('/chat/completions');
    expect(got.headers.authorization).toBe('Bearer sk-test-123');
    expect(got.body.max_tokens).toBe(4);
  });

  it('parses an SSE stream up to [DONE], skipping comments', async () => {
    const r = await upstream.stream(
      chat({ stream: true, stream_options: { include_usage: true } }),
      signal(),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const chunks = await collect(r.value);
    const text = chunks
      .map((c) => ((c.choices as Json[])[0]?.delta as { content?: string } | undefined)?.content ?? '')
      .join('');
    expect(text).toBe('Hello from the fake');
    expect(chunks.at(-1)?.usage).toMatchObject({ completion_tokens: 4 });
  });

  it('reports a 5xx as a retryable failure, not a delivery', async () => {
    fake.queue.push('fail500');
    const r = await upstream.complete(chat(), signal());
    expect(r).toMatchObject({ ok: false, kind: 'failed', error: 'upstream_error', status: 500 });
  });

  it("treats the operator's bad key (401) as the gateway's failure", async () => {
    fake.queue.push('unauthorized');
    expect(await upstream.complete(chat(), signal())).toMatchObject({
      ok: false,
      kind: 'failed',
      reason: 'status_401',
    });
  });

  it("passes a 400 through as the caller's own rejected request", async () => {
    fake.queue.push('reject400');
    const r = await upstream.complete(chat(), signal());
    expect(r).toMatchObject({ ok: false, kind: 'rejected', status: 400, body: { error: { param: 'stop' } } });
  });

  it('throws UpstreamCut when the stream is cut before [DONE]', async () => {
    fake.queue.push('cut');
    const r = await upstream.stream(chat({ stream: true }), signal());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    await expect(collect(r.value)).rejects.toBeInstanceOf(UpstreamCut);
  });

  it('throws UpstreamCut on a mid-stream error event', async () => {
    fake.queue.push('error_event');
    const r = await upstream.stream(chat({ stream: true }), signal());
    if (!r.ok) throw new Error('expected a stream');
    await expect(collect(r.value)).rejects.toMatchObject({ reason: 'error_event' });
  });

  it('times out an upstream that never answers', async () => {
    fake.queue.push('hang');
    const r = await upstream.complete(chat(), signal());
    expect(r).toMatchObject({ ok: false, kind: 'failed', error: 'upstream_timeout' });
  });

  it('reports a refused connection as connect_failed', async () => {
    const dead = createOpenAiUpstream({
      baseUrl: 'http://127.0.0.1:9/v1',
      timeoutMs: 1000,
      maxResponseBytes: 1024,
    });
    expect(await dead.complete(chat(), signal())).toMatchObject({ ok: false, reason: 'connect_failed' });
  });

  it('posts embeddings to /embeddings', async () => {
    const r = await upstream.embed({ model: 'e', input: ['a', 'b'] }, signal());
    expect(r.ok && (r.value.data as unknown[]).length).toBe(2);
    expect(fake.received.at(-1)?.path).toBe('/embeddings');
  });
});
