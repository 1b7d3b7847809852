/**
 * Inference routes (SPEC §4.1, DESIGN §4.10): GET /v1/models and /v1/pricing (public),
 * POST /v1/chat/completions and /v1/embeddings (x402 scheme `exact`). The paid routes
 * read the body as raw bytes: the bytes hashed into requestHash are the bytes parsed.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { capForBudget, countChatPrompt, planChat, upstreamChatBody } from '../inference/chat-plan.ts';
import { parseChatRequest, parseJsonBody, validate } from '../inference/chat-request.ts';
import { embeddingsRequestSchema, planEmbeddings } from '../inference/embeddings-request.ts';
import { failed, type Json } from '../inference/upstreams/upstream.ts';
import { modelsList, pricingTable } from '../inference/views.ts';
import { sendError } from './error-handling.ts';
import { sendPaidJson, sendUpstreamFailure, sendUpstreamProblem } from './inference/deliver.ts';
import { abortOnClientClose, charge, modelFor, rawBody, runChat } from './inference/paid-call.ts';

export function inferenceRoutes(app: FastifyInstance, deps: Deps): void {
  app.get('/v1/models', async () => modelsList(deps.inference.catalogue));
  // Wildcard: model ids may contain slashes (openai/gpt-4o).
  app.get('/v1/models/*', async (request, reply) => {
    const id = (request.params as { '*': string })['*'];
    const model = modelsList(deps.inference.catalogue).data.find((m) => m.id === id);
    return (
      model ??
      sendError(reply, 'model_not_found', `the model ${JSON.stringify(id.slice(0, 256))} does not exist`)
    );
  });
  app.get('/v1/pricing', async () => pricingTable(deps.inference.catalogue, deps.config));

  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post('/v1/chat/completions', (req, reply) => chatCompletions(req, reply, deps));
    scope.post('/v1/embeddings', (req, reply) => embeddings(req, reply, deps));
  });
}

async function chatCompletions(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: Deps,
): Promise<FastifyReply> {
  const req = parseChatRequest(rawBody(request));
  const model = modelFor(deps, req.model, 'chat');
  const tok = await deps.inference.tokenizer(model);
  const plan = planChat(model, req, countChatPrompt(tok, req.messages, req));
  return charge(
    request,
    reply,
    deps,
    {
      subject: `inf:chat:${model.id}`,
      resource: 'POST /v1/chat/completions',
      description: `${model.id}: ${plan.promptTokens} prompt tokens + up to ${plan.maxTokens * plan.choices} completion tokens`,
      price: plan.price,
      pricingSourceVersion: model.pricingSourceVersion,
    },
    async (paid) => {
      // Same body and catalogue as quoted give the plan's own cap; the paid price bounds it regardless.
      const maxTokens = paid ? capForBudget(model, plan, paid.claims.price) : plan.maxTokens;
      if (maxTokens < 1) {
        await paid?.abandon('quote_outdated');
        return sendError(reply, 'conflict', 'the price paid no longer covers this request', {
          reason: 'quote_outdated',
        });
      }
      return runChat({
        reply,
        deps,
        paid,
        model,
        upstream: await deps.inference.chat(model),
        body: upstreamChatBody(model, req, maxTokens),
        stream: req.stream === true,
        tok,
        promptTokens: plan.promptTokens,
      });
    },
  );
}

async function embeddings(request: FastifyRequest, reply: FastifyReply, deps: Deps): Promise<FastifyReply> {
  const req = validate(embeddingsRequestSchema, parseJsonBody(rawBody(request)));
  const model = modelFor(deps, req.model, 'embeddings');
  const tok = await deps.inference.tokenizer(model);
  const plan = planEmbeddings(model, tok, req);
  return charge(
    request,
    reply,
    deps,
    {
      subject: `inf:embeddings:${model.id}`,
      resource: 'POST /v1/embeddings',
      description: `${model.id}: ${plan.inputTokens} input tokens`,
      price: plan.price,
      pricingSourceVersion: model.pricingSourceVersion,
    },
    async (paid) => {
      const upstream = await deps.inference.embeddings(model);
      const upstreamModel = model.upstream.type === 'openai' ? (model.upstream.model ?? model.id) : model.id;
      const abort = abortOnClientClose(reply, paid);
      const r = await upstream.embed({ ...req, model: upstreamModel }, abort.signal);
      if (!r.ok) return sendUpstreamProblem(reply, paid, r);
      if (!Array.isArray(r.value.data))
        return sendUpstreamFailure(reply, paid, failed('upstream_error', 'bad_response'));
      const body: Json = { ...r.value, model: model.id };
      if (!body.usage) body.usage = { prompt_tokens: plan.inputTokens, total_tokens: plan.inputTokens };
      return sendPaidJson(reply, paid, 200, body);
    },
  );
}
