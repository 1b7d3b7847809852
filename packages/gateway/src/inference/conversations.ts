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

const itemInput = z.strictObject({
  role: z.enum(['system', 'user', 'assistant']),
  content: text(200_000),
});

export const createConversationSchema = z.strictObject({
  title: text(200).optional(),
  model: z.string().min(1).max(256).nullable().optional(),
  metadata: metadataSchema.optional(),
  items: z.array(itemInput).max(20).optional(),
});

export const updateConversationSchema = z.strictObject({
  title: text(200).optional(),
  model: z.string().min(1).max(256).nullable().optional(),
  metadata: metadataSchema.optional(),
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

export function itemView(i: ConversationItem) {
  return {
    id: i.id,
    object: 'conversation.item',
    type: 'message',
    seq: i.seq,
    role: i.role,
    content: [{ type: i.role === 'assistant' ? 'output_text' : 'input_text', text: i.content }],
    created_at: unix(i.createdAt),
    ...(i.usage ? { usage: i.usage } : {}),
    ...(i.redemptionId ? { paid: true } : {}),
  };
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
