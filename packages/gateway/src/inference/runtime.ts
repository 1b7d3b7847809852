/**
 * The inference runtime handed to the routes: the catalogue and one upstream per
 * model (built at boot; local models load their weights on first use).
 */
import type { Config } from '../config.ts';
import { catalogueFor, type ModelCatalogue, type ModelEntry } from './catalogue.ts';
import { loadTokenizer, type Tokenizer } from './tokenizer.ts';
import { createLocalChat } from './upstreams/local-chat.ts';
import { createLocalEmbeddings } from './upstreams/local-embeddings.ts';
import { createInferenceAgent, createOpenAiUpstream } from './upstreams/openai-http.ts';
import type { ChatUpstream, EmbeddingsUpstream } from './upstreams/upstream.ts';

export interface InferenceRuntime {
  catalogue: ModelCatalogue;
  tokenizer(model: ModelEntry): Promise<Tokenizer>;
  chat(model: ModelEntry): Promise<ChatUpstream>;
  embeddings(model: ModelEntry): Promise<EmbeddingsUpstream>;
  close(): Promise<void>;
}

export function createInferenceRuntime(
  config: Pick<Config, 'modelsFile' | 'sandbox' | 'maxResponseBytes'>,
  catalogue: ModelCatalogue = catalogueFor(config),
): InferenceRuntime {
  const agent = createInferenceAgent();
  const remote = new Map<string, ReturnType<typeof createOpenAiUpstream>>();
  const remoteFor = (m: ModelEntry) => {
    if (m.upstream.type !== 'openai') throw new Error(`${m.id} is not an HTTP model`);
    let u = remote.get(m.id);
    if (!u) {
      u = createOpenAiUpstream({
        baseUrl: m.upstream.baseUrl,
        ...(m.upstream.apiKey ? { apiKey: m.upstream.apiKey } : {}),
        timeoutMs: m.upstream.timeoutMs,
        maxResponseBytes: config.maxResponseBytes,
        dispatcher: agent,
      });
      remote.set(m.id, u);
    }
    return u;
  };
  const tokenizer = (m: ModelEntry) => loadTokenizer(m.tokenizer);

  return {
    catalogue,
    tokenizer,
    async chat(m) {
      if (m.upstream.type === 'local-chat') return createLocalChat(m.id, await tokenizer(m));
      return remoteFor(m);
    },
    async embeddings(m) {
      if (m.upstream.type === 'local-embeddings') return createLocalEmbeddings(m.id, await tokenizer(m));
      return remoteFor(m);
    },
    close: () => agent.close(),
  };
}
