/**
 * /v1/conversations (bearer token; DESIGN §4.10). Every route acts only on the
 * caller's own conversations: another owner's id is a 404, never a 403, so ids
 * cannot be probed. The paid turn reads its body as raw bytes like the other paid routes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { parseJsonBody, validate } from '../inference/chat-request.ts';
import {
  addItemsSchema,
  conversationView,
  createConversationSchema,
  itemById,
  itemsNewestFirst,
  itemView,
  turnSchema,
  updateConversationSchema,
} from '../inference/conversations.ts';
import type { Conversation, Owner } from '../store/store.ts';
import { authenticate } from './authenticate.ts';
import { conversationTurn } from './inference/conversation-turn.ts';
import { modelFor, rawBody } from './inference/paid-call.ts';

const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;

async function ownerOf(request: FastifyRequest, deps: Deps): Promise<Owner> {
  const who = await authenticate(request, deps);
  if (who.kind !== 'owner')
    throw new ApiError(
      'forbidden',
      'conversations belong to a signed-in wallet; the operator token has none',
    );
  return who.owner;
}

async function mine(request: FastifyRequest, deps: Deps): Promise<{ owner: Owner; conv: Conversation }> {
  const owner = await ownerOf(request, deps);
  const { id } = request.params as { id: string };
  const conv = await deps.store.conversations.byId(owner, id);
  if (!conv) throw new ApiError('not_found', 'no such conversation');
  return { owner, conv };
}

/** One query parameter as a string; a repeated one (`?a=1&a=2`) is refused, not passed on as an array. */
function queryParam(q: unknown, name: string): string | undefined {
  const raw = (q as Record<string, unknown>)[name];
  if (raw === undefined || typeof raw === 'string') return raw;
  throw new ApiError('invalid_request', `${name} must be given once`, { param: name });
}

/** The OpenAI list shape over a page fetched with one row more than `limit`. */
function listPage<T, V extends { id: string }>(rows: T[], limit: number, view: (row: T) => V) {
  const data = rows.slice(0, limit).map(view);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: rows.length > limit,
  };
}

function pageLimit(q: unknown): number {
  const raw = queryParam(q, 'limit');
  if (raw === undefined) return DEFAULT_PAGE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE)
    throw new ApiError('invalid_request', `limit must be 1..${MAX_PAGE}`, { param: 'limit' });
  return n;
}

function checkModel(deps: Deps, model: string | null | undefined): void {
  if (model) modelFor(deps, model, 'chat');
}

export function conversationRoutes(app: FastifyInstance, deps: Deps): void {
  const { conversations } = deps.store;

  app.post('/v1/conversations', async (request) => {
    const owner = await ownerOf(request, deps);
    const body = validate(createConversationSchema, request.body ?? {});
    checkModel(deps, body.model);
    const conv = await conversations.create({
      owner,
      title: body.title ?? '',
      model: body.model ?? null,
      metadata: body.metadata ?? {},
    });
    if (body.items?.length) {
      await conversations.append(
        conv.id,
        body.items.map((i) => ({ ...i, redemptionId: null, usage: null })),
      );
    }
    return conversationView(conv);
  });

  app.get('/v1/conversations', async (request) => {
    const owner = await ownerOf(request, deps);
    const limit = pageLimit(request.query);
    const after = queryParam(request.query, 'after');
    const rows = await conversations.list(owner, { limit: limit + 1, ...(after ? { before: after } : {}) });
    return listPage(rows, limit, conversationView);
  });

  app.get('/v1/conversations/:id', async (request) => conversationView((await mine(request, deps)).conv));

  const update = async (request: FastifyRequest) => {
    const { owner, conv } = await mine(request, deps);
    const patch = validate(updateConversationSchema, request.body ?? {});
    checkModel(deps, patch.model);
    const updated = await conversations.update(owner, conv.id, patch);
    if (!updated) throw new ApiError('not_found', 'no such conversation');
    return conversationView(updated);
  };
  app.patch('/v1/conversations/:id', update);
  // OpenAI's SDK updates with POST.
  app.post('/v1/conversations/:id', update);

  app.delete('/v1/conversations/:id', async (request) => {
    const { owner, conv } = await mine(request, deps);
    await conversations.delete(owner, conv.id);
    return { id: conv.id, object: 'conversation.deleted', deleted: true };
  });

  /**
   * `after` is the cursor: the `seq` of the last item seen, or its id (what OpenAI's SDK
   * sends: the page's `last_id`). `order` is `asc` (ours, the default) or `desc`
   * (OpenAI's default). `include` (tool outputs and the like) has nothing to add here.
   */
  app.get('/v1/conversations/:id/items', async (request) => {
    const { conv } = await mine(request, deps);
    const limit = pageLimit(request.query);
    const order = queryParam(request.query, 'order') ?? 'asc';
    if (order !== 'asc' && order !== 'desc')
      throw new ApiError('invalid_request', 'order is asc or desc', { param: 'order' });
    const afterRaw = queryParam(request.query, 'after');
    let after: number | undefined;
    if (afterRaw !== undefined && /^\d+$/.test(afterRaw)) after = Number(afterRaw);
    else if (afterRaw !== undefined) {
      const seen = await itemById(conversations, conv.id, afterRaw);
      if (!seen) {
        throw new ApiError('invalid_request', 'after is the id or the seq of the last item seen', {
          param: 'after',
        });
      }
      after = seen.seq;
    }
    const cursor = after !== undefined ? { [order === 'asc' ? 'after' : 'before']: after } : {};
    const rows =
      order === 'asc'
        ? await conversations.items(conv.id, { limit: limit + 1, ...cursor })
        : await itemsNewestFirst(conversations, conv.id, { limit: limit + 1, ...cursor });
    return listPage(rows, limit, itemView);
  });

  app.get('/v1/conversations/:id/items/:itemId', async (request) => {
    const { conv } = await mine(request, deps);
    const { itemId } = request.params as { itemId: string };
    const item = await itemById(conversations, conv.id, itemId);
    if (!item) throw new ApiError('not_found', 'no such item in this conversation');
    return itemView(item);
  });

  app.post('/v1/conversations/:id/items', async (request) => {
    const { conv } = await mine(request, deps);
    const body = validate(addItemsSchema, request.body ?? {});
    const items = await conversations.append(
      conv.id,
      body.items.map((i) => ({ ...i, redemptionId: null, usage: null })),
    );
    return listPage(items, items.length, itemView);
  });

  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post('/v1/conversations/:id/messages', async (request: FastifyRequest, reply: FastifyReply) => {
      const { conv } = await mine(request, deps);
      const turn = validate(turnSchema, parseJsonBody(rawBody(request)));
      return conversationTurn(request, reply, deps, conv, turn);
    });
  });
}
