/**
 * Validating an OpenAI chat-completions request. Only parameters whose cost we can
 * bound are accepted: an unknown field could make the upstream bill for things the
 * quote never counted (web search plugins, provider fallbacks, audio), so it is a
 * 400 rather than passed through.
 */
import { z } from 'zod';
import { ApiError } from '../errors.ts';

const textPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const content = z.union([z.string(), z.array(textPart).max(1000)]);
const name = z.string().min(1).max(256).optional();

const toolCall = z.looseObject({
  id: z.string().max(256),
  type: z.literal('function'),
  function: z.strictObject({ name: z.string().max(256), arguments: z.string() }),
});

export const chatMessageSchema = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('system'), content, name }),
  z.strictObject({ role: z.literal('developer'), content, name }),
  z.strictObject({ role: z.literal('user'), content, name }),
  z.strictObject({
    role: z.literal('assistant'),
    content: content.nullable().optional(),
    name,
    tool_calls: z.array(toolCall).max(128).optional(),
    refusal: z.string().nullable().optional(),
  }),
  z.strictObject({ role: z.literal('tool'), content, tool_call_id: z.string().max(256) }),
]);
export type ChatMessage = z.infer<typeof chatMessageSchema>;

const tokenCap = z.number().int().min(1).max(10_000_000);

export const chatRequestSchema = z.strictObject({
  model: z.string().min(1).max(256),
  messages: z.array(chatMessageSchema).min(1).max(10_000),
  max_tokens: tokenCap.nullable().optional(),
  max_completion_tokens: tokenCap.nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.strictObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  n: z.number().int().min(1).max(8).nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)])
    .nullable()
    .optional(),
  presence_penalty: z.number().min(-2).max(2).nullable().optional(),
  frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  logit_bias: z.record(z.string(), z.number()).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  user: z.string().max(256).optional(),
  tools: z
    .array(z.looseObject({ type: z.string() }))
    .max(128)
    .optional(),
  tool_choice: z.union([z.string(), z.looseObject({})]).optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: z.looseObject({ type: z.string() }).optional(),
  reasoning_effort: z.enum(['minimal', 'low', 'medium', 'high']).nullable().optional(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** The text of a message's content (text parts joined), for counting and for local models. */
export function contentText(c: ChatMessage['content'] | null | undefined): string {
  if (c === null || c === undefined) return '';
  return typeof c === 'string' ? c : c.map((p) => p.text).join('');
}

/** Parses the raw body bytes as JSON. Throws ApiError('invalid_request'). */
export function parseJsonBody(raw: Buffer | null): unknown {
  if (!raw || raw.length === 0) throw new ApiError('invalid_request', 'the request needs a JSON body');
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError('invalid_request', 'request body is not valid JSON');
  }
}

/** Validates against a schema and renders the first problem as a 400 the way OpenAI does (param + message). */
export function validate<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const param = issue?.path.join('.') ?? '';
  const message =
    issue?.code === 'unrecognized_keys'
      ? `unsupported parameter: ${issue.keys.join(', ')}`
      : `${param ? `${param}: ` : ''}${issue?.message ?? 'invalid request'}`;
  throw new ApiError('invalid_request', message, param ? { param } : {});
}

export function parseChatRequest(raw: Buffer | null): ChatRequest {
  return validate(chatRequestSchema, parseJsonBody(raw));
}
