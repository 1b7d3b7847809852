/** Nothing a caller sends to the inference routes produces a 500 (DESIGN §4.6). */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { loadConfig, withConfig } from '../../src/config.ts';
import type { Deps } from '../../src/deps.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';

let app: FastifyInstance;
let deps: Deps;
let store: Store;
beforeAll(async () => {
  const config = withConfig(
    loadConfig({ TOLLGATE_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'silent' }, []),
    {
      databaseUrl: 'sqlite::memory:',
    },
  );
  store = await openStore(config.databaseUrl);
  deps = assembleDeps(config, store, {});
  app = await buildApp(deps, { logger: false });
});
afterAll(async () => {
  await app.close();
  await deps.inference.close();
  await store.close();
});

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('<|endoftext|>', '\ud800', '<|im_start|>', ''),
);
const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom('system', 'user', 'assistant', 'tool', 'developer'), fc.string()),
    content: fc.oneof(
      text,
      fc.array(fc.record({ type: fc.constantFrom('text', 'image_url'), text })),
      fc.constant(null),
      fc.integer(),
    ),
    name: text,
    tool_call_id: text,
  },
  { requiredKeys: [] },
);
const chatBody = fc.record(
  {
    model: fc.oneof(fc.constantFrom('tollgate-dev-chat', 'universal-sentence-encoder-lite'), text),
    messages: fc.oneof(fc.array(message, { maxLength: 4 }), fc.anything()),
    max_tokens: fc.oneof(fc.integer(), fc.double(), fc.constant(null), text),
    n: fc.oneof(fc.integer({ min: -2, max: 20 }), fc.anything()),
    stream: fc.anything(),
    tools: fc.anything(),
    input: fc.oneof(
      text,
      fc.array(text),
      fc.array(fc.integer()),
      fc.array(fc.array(fc.integer({ min: -5, max: 300_000 }))),
    ),
  },
  { requiredKeys: [] },
);

/** Requests that pass validation, with hostile text inside. */
const wellFormedChat = fc.record({
  model: fc.constant('tollgate-dev-chat'),
  messages: fc.array(fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: text }), {
    minLength: 1,
    maxLength: 3,
  }),
  max_tokens: fc.integer({ min: 1, max: 100_000 }),
});
const wellFormedEmbeddings = fc.record({
  model: fc.constant('universal-sentence-encoder-lite'),
  input: fc.oneof(
    text.filter((t) => t.length > 0),
    fc.array(fc.integer({ min: 0, max: 300_000 }), { minLength: 1, maxLength: 5 }),
  ),
});
const seen = new Set<number>();

describe('hostile bodies', () => {
  it('never answer 500 on chat completions or embeddings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.tuple(
            fc.constantFrom('/v1/chat/completions', '/v1/embeddings'),
            fc.oneof(
              chatBody.map((x) => JSON.stringify(x)),
              fc.string(),
              fc.json(),
            ),
          ),
          fc.tuple(
            fc.constant('/v1/chat/completions'),
            wellFormedChat.map((x) => JSON.stringify(x)),
          ),
          fc.tuple(
            fc.constant('/v1/embeddings'),
            wellFormedEmbeddings.map((x) => JSON.stringify(x)),
          ),
        ),
        fc.constantFrom('application/json', 'text/plain', 'application/octet-stream'),
        async ([url, payload], type) => {
          const res = await app.inject({ method: 'POST', url, payload, headers: { 'content-type': type } });
          // Without chains there is nothing to pay with: a well-formed request is a 503, never a 500.
          expect(res.statusCode, res.body).not.toBe(500);
          if (res.statusCode >= 500)
            expect(res.json()).toMatchObject({ error: { code: 'endpoint_unavailable' } });
          if (res.statusCode >= 400) expect(res.json()).toHaveProperty('error');
          seen.add(res.statusCode);
        },
      ),
      { numRuns: 300 },
    );
    // The run reached past validation (503: no chain to pay with) as well as failing it (400/404).
    expect(seen).toContain(503);
    expect(seen).toContain(400);
  });
});
