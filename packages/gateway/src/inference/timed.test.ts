/** Inference upstream latency: each call observed once, by upstream and outcome. */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../metrics.ts';
import type { InferenceRuntime } from './runtime.ts';
import { timedInference } from './timed.ts';
import { failed, type Json, type UpstreamResult } from './upstreams/upstream.ts';

function fakeRuntime(results: UpstreamResult<Json>[]): InferenceRuntime {
  const next = async () => {
    const r = results.shift();
    if (!r) throw new Error('upstream exploded');
    return r;
  };
  return {
    catalogue: { models: [], get: () => undefined } as unknown as InferenceRuntime['catalogue'],
    tokenizer: async () => {
      throw new Error('not used');
    },
    chat: async () => ({
      complete: next,
      stream: async () => ({ ok: true, value: (async function* () {})() }),
    }),
    embeddings: async () => ({ embed: next }),
    close: async () => {},
  };
}

describe('timed inference upstreams', () => {
  it('observes every call by upstream and outcome, a throw included', async () => {
    const metrics = createMetrics({ defaults: false });
    const runtime = timedInference(
      fakeRuntime([
        { ok: true, value: {} },
        { ok: false, kind: 'rejected', status: 400, body: {} },
        failed('upstream_timeout', 'timeout'),
        { ok: true, value: {} },
      ]),
      metrics,
    );
    const model = {} as Parameters<InferenceRuntime['chat']>[0];
    const signal = new AbortController().signal;
    const chat = await runtime.chat(model);
    await chat.complete({}, signal);
    await chat.complete({}, signal);
    await chat.complete({}, signal);
    await chat.stream({}, signal);
    const embeddings = await runtime.embeddings(model);
    await embeddings.embed({}, signal);
    await expect(embeddings.embed({}, signal)).rejects.toThrow('upstream exploded');

    const counts = (await metrics.upstreamDuration.get()).values
      .filter((v) => v.metricName === 'tollgate_upstream_duration_seconds_count')
      .map((v) => [v.labels['upstream'], v.labels['outcome'], v.value])
      .sort();
    expect(counts).toEqual(
      [
        ['chat', 'ok', 2],
        ['chat', 'rejected', 1],
        ['chat', 'upstream_timeout', 1],
        ['embeddings', 'ok', 1],
        ['embeddings', 'upstream_error', 1],
      ].sort(),
    );
  });

  it('says client_aborted when the caller went away', async () => {
    const metrics = createMetrics({ defaults: false });
    const runtime = timedInference(fakeRuntime([failed('upstream_error', 'aborted')]), metrics);
    const abort = new AbortController();
    abort.abort();
    await (await runtime.chat({} as Parameters<InferenceRuntime['chat']>[0])).complete({}, abort.signal);
    const [count] = (await metrics.upstreamDuration.get()).values.filter((v) =>
      v.metricName?.endsWith('_count'),
    );
    expect(count?.labels).toEqual({ upstream: 'chat', outcome: 'client_aborted' });
  });
});
