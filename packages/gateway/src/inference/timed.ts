/**
 * Upstream latency of inference calls (tollgate_upstream_duration_seconds, upstream
 * `chat` or `embeddings`): the runtime's upstreams, each call timed until the upstream
 * answered (a whole JSON answer; for a stream, until it started).
 */
import type { Metrics } from '../metrics.ts';
import type { InferenceRuntime } from './runtime.ts';
import type { ChatUpstream, EmbeddingsUpstream, UpstreamResult } from './upstreams/upstream.ts';

/** ok, rejected (the upstream refused the request: delivered), upstream_error, upstream_timeout, client_aborted. */
function outcomeOf(r: UpstreamResult<unknown>, signal: AbortSignal): string {
  if (r.ok) return 'ok';
  if (r.kind === 'rejected') return 'rejected';
  return signal.aborted ? 'client_aborted' : r.error;
}

export function timedInference(runtime: InferenceRuntime, metrics: Metrics): InferenceRuntime {
  const timed = async <T>(
    upstream: 'chat' | 'embeddings',
    signal: AbortSignal,
    call: () => Promise<UpstreamResult<T>>,
  ): Promise<UpstreamResult<T>> => {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const r = await call();
      metrics.upstreamDuration.observe({ upstream, outcome: outcomeOf(r, signal) }, seconds());
      return r;
    } catch (err) {
      metrics.upstreamDuration.observe({ upstream, outcome: 'upstream_error' }, seconds());
      throw err;
    }
  };
  const chat = (u: ChatUpstream): ChatUpstream => ({
    complete: (body, signal) => timed('chat', signal, () => u.complete(body, signal)),
    stream: (body, signal) => timed('chat', signal, () => u.stream(body, signal)),
  });
  const embeddings = (u: EmbeddingsUpstream): EmbeddingsUpstream => ({
    embed: (body, signal) => timed('embeddings', signal, () => u.embed(body, signal)),
  });
  return {
    get catalogue() {
      return runtime.catalogue;
    },
    tokenizer: (model) => runtime.tokenizer(model),
    chat: async (model) => chat(await runtime.chat(model)),
    embeddings: async (model) => embeddings(await runtime.embeddings(model)),
    close: () => runtime.close(),
  };
}
