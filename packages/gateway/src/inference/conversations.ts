/**
 * Conversations (DESIGN §4.10), shaped after OpenAI's Conversations API: `conv_…`
 * ids, `object: "conversation"`, metadata of at most 16 string pairs, list pages of
 * `{ object: "list", data, first_id, last_id, has_more }`. Listing one's own
 * conversations and PATCH are our extensions.
 */
import { z } from 'zod';
import { ApiError } from '../errors.ts';
import type { Conversation, ConversationItem, ConversationRepo } from '../store/store.ts';
import { chatRequestSchema } from './chat-request.ts';

/** Stored text: PostgreSQL cannot keep a NUL character, so it is refused up front (400). */
const text = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[^\u0000]*$/, 'must not contain NUL characters');

export const metadataSchema = z
  .record(text(64).min(1), text(512))
  .refine((m) => Object.keys(m).length <= 16, 'at most 16 metadata pairs');

/**
 * Content parts of OpenAI's input items: text only. Image, audio and file parts cost
 * the upstream tokens we cannot count, so they are refused, not stored.
 */
const UNPRICED_PART =
  'only text content parts are accepted (`input_text`, `output_text`, `text`): image, audio and file parts cannot be priced';
const contentPart = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('input_text'), text: z.string() }),
    z.strictObject({ type: z.literal('text'), text: z.string() }),
    // Annotations (citations) and logprobs of a model's earlier answer are not stored.
    z.strictObject({
      type: z.literal('output_text'),
      text: z.string(),
      annotations: z.array(z.unknown()).optional(),
      logprobs: z.array(z.unknown()).nullable().optional(),
    }),
  ],
  { error: UNPRICED_PART },
);

/**
 * One item as OpenAI's Conversations API takes it (`EasyInputMessage`, an input or an
 * output `message`), or our short `{ role, content }`: `type` is optional. Parts are
 * joined into the one stored text. `developer` is kept as a `system` message: chat
 * upstreams other than OpenAI know no developer role. Only message items: tool calls
 * and the like are refused.
 */
const itemInput = z
  .strictObject({
    type: z.literal('message', { error: 'only `message` items are accepted' }).optional(),
    role: z.enum(['system', 'developer', 'user', 'assistant']),
    content: z.union([z.string(), z.array(contentPart).max(1000)]),
    id: z.string().max(256).optional(),
    status: z.enum(['in_progress', 'completed', 'incomplete']).optional(),
    phase: z.enum(['commentary', 'final_answer']).nullable().optional(),
  })
  .transform((i) => ({
    role: i.role === 'developer' ? ('system' as const) : i.role,
    content: typeof i.content === 'string' ? i.content : i.content.map((p) => p.text).join(''),
  }))
  .pipe(z.object({ role: z.enum(['system', 'user', 'assistant']), content: text(200_000) }));

/** `metadata: null` (OpenAI's SDK allows it) is no metadata. */
const metadataInput = metadataSchema
  .nullable()
  .optional()
  .transform((m) => m ?? undefined);

export const createConversationSchema = z.strictObject({
  title: text(200).optional(),
  model: z.string().min(1).max(256).nullable().optional(),
  metadata: metadataInput,
  items: z.array(itemInput).max(20).nullable().optional(),
});

export const updateConversationSchema = z.strictObject({
  title: text(200).optional(),
  model: z.string().min(1).max(256).nullable().optional(),
  metadata: metadataSchema
    .nullable()
    .optional()
    .transform((m) => (m === null ? {} : m)),
});

export const addItemsSchema = z.strictObject({ items: z.array(itemInput).min(1).max(20) });

/** A paid turn: the user's message plus the chat parameters that make sense per turn. */
export const turnSchema = chatRequestSchema
  .pick({
    max_tokens: true,
    max_completion_tokens: true,
    temperature: true,
    top_p: true,
    stop: true,
    seed: true,
    presence_penalty: true,
    frequency_penalty: true,
    user: true,
  })
  .extend({
    content: text(200_000).min(1),
    model: z.string().min(1).max(256).optional(),
    stream: z.boolean().optional(),
  })
  .strict();
export type TurnRequest = z.infer<typeof turnSchema>;

const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);

export function conversationView(c: Conversation) {
  return {
    id: c.id,
    object: 'conversation',
    created_at: unix(c.createdAt),
    updated_at: unix(c.updatedAt),
    title: c.title,
    model: c.model,
    metadata: c.metadata,
  };
}

/**
 * An item as OpenAI's Conversations API returns a `message` (what the `openai` SDK's
 * `ConversationItem` parses), with our `object`, `seq`, `created_at`, `usage` and `paid`.
 */
export function itemView(i: ConversationItem) {
  return {
    id: i.id,
    object: 'conversation.item',
    type: 'message',
    status: 'completed',
    seq: i.seq,
    role: i.role,
    content: [
      i.role === 'assistant'
        ? { type: 'output_text', text: i.content, annotations: [] }
        : { type: 'input_text', text: i.content },
    ],
    created_at: unix(i.createdAt),
    ...(i.usage ? { usage: i.usage } : {}),
    ...(i.redemptionId ? { paid: true } : {}),
  };
}

const SCAN_PAGE = 500;

/**
 * The item with this id, or null. The store pages items by `seq`, so this reads the
 * conversation in pages (the cursor OpenAI's SDK sends is an item id).
 */
export async function itemById(
  repo: ConversationRepo,
  conversationId: string,
  itemId: string,
): Promise<ConversationItem | null> {
  for (let after = 0; ; ) {
    const page = await repo.items(conversationId, { limit: SCAN_PAGE, after });
    const hit = page.find((i) => i.id === itemId);
    if (hit) return hit;
    if (page.length < SCAN_PAGE) return null;
    after = page.at(-1)!.seq;
  }
}

/** Up to `limit` items before `before` (a seq; all when absent), newest first. */
export async function itemsNewestFirst(
  repo: ConversationRepo,
  conversationId: string,
  opts: { limit: number; before?: number },
): Promise<ConversationItem[]> {
  let window: ConversationItem[] = [];
  for (let after = 0; ; ) {
    const page = await repo.items(conversationId, { limit: SCAN_PAGE, after });
    const kept = opts.before === undefined ? page : page.filter((i) => i.seq < opts.before!);
    window = [...window, ...kept].slice(-opts.limit);
    if (page.length < SCAN_PAGE || kept.length < page.length) return window.reverse();
    after = page.at(-1)!.seq;
  }
}

/** Longest history a turn will load; a longer one would not fit any context window anyway. */
const MAX_HISTORY_ITEMS = 20_000;

/** Every item of a conversation in order. Throws a 400 for a history too long to send. */
export async function allItems(repo: ConversationRepo, conversationId: string): Promise<ConversationItem[]> {
  const out: ConversationItem[] = [];
  for (;;) {
    const last = out.at(-1);
    const page = await repo.items(conversationId, { limit: 500, ...(last ? { after: last.seq } : {}) });
    out.push(...page);
    if (out.length > MAX_HISTORY_ITEMS) {
      throw new ApiError(
        'invalid_request',
        `the conversation has more than ${MAX_HISTORY_ITEMS} items; start a new one`,
        {
          reason: 'context_length_exceeded',
        },
      );
    }
    if (page.length < 500) return out;
  }
}
