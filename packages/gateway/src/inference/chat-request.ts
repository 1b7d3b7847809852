/**
 * Validating an OpenAI chat-completions request. Only parameters whose cost we can
 * bound are accepted: an unknown field could make the upstream bill for things the
 * quote never counted (web search plugins, provider fallbacks, audio), so it is a
 * 400 rather than passed through.
 */
import { z } from 'zod';
import { ApiError } from '../errors.ts';

/**
 * Content parts: text everywhere, refusal text in assistant messages. Image, audio
 * and file parts cost the upstream tokens we cannot count from the request, so they
 * are refused rather than forwarded unpriced.
 */
const UNPRICED_PART =
  'only `text` content parts are accepted (and `refusal` parts in assistant messages): image, audio and file parts cannot be priced';
const textPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const refusalPart = z.strictObject({ type: z.literal('refusal'), refusal: z.string() });
const parts = <T extends z.ZodType>(part: T) => z.array(part).max(1000);
const content = z.union([
  z.string(),
  parts(z.discriminatedUnion('type', [textPart], { error: UNPRICED_PART })),
]);
const assistantContent = z.union([
  z.string(),
  parts(z.discriminatedUnion('type', [textPart, refusalPart], { error: UNPRICED_PART })),
]);
export type ContentPart = z.infer<typeof textPart> | z.infer<typeof refusalPart>;
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
    content: assistantContent.nullable().optional(),
    name,
    tool_calls: z.array(toolCall).max(128).optional(),
    refusal: z.string().nullable().optional(),
  }),
  z.strictObject({ role: z.literal('tool'), content, tool_call_id: z.string().max(256) }),
]);
export type ChatMessage = z.infer<typeof chatMessageSchema>;

const tokenCap = z.number().int().min(1).max(10_000_000);

/**
 * A function tool. Hosted tools (web search, file search, code interpreter) make the
 * upstream add results to the context, and bill for them, beyond what the quote counts.
 */
const toolDefinition = z.strictObject({
  type: z.literal('function', {
    error: 'only function tools are accepted: hosted tools add context and fees the quote cannot count',
  }),
  function: z.strictObject({
    name: z.string().min(1).max(256),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

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
  tools: z.array(toolDefinition).max(128).optional(),
  tool_choice: z.union([z.string(), z.looseObject({})]).optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: z.looseObject({ type: z.string() }).optional(),
  reasoning_effort: z.enum(['minimal', 'low', 'medium', 'high']).nullable().optional(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;

/** The text a content part puts in front of the model. */
export function partText(p: ContentPart): string {
  return p.type === 'text' ? p.text : p.refusal;
}

/** The text of a message's content (parts joined), for local models. */
export function contentText(c: ChatMessage['content'] | null | undefined): string {
  if (c === null || c === undefined) return '';
  return typeof c === 'string' ? c : c.map(partText).join('');
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

/** Legacy OpenAI parameters we refuse, with what replaces them. */
const REPLACED_BY: Record<string, string> = {
  functions: 'use `tools`',
  function_call: 'use `tool_choice` (or `tool_calls` in an assistant message)',
};

type Issue = z.core.$ZodIssue;

/**
 * The most specific problem inside a failed union: the branch that got furthest into
 * the value (an array of parts failing at one part's `type`) says more than
 * "Invalid input" at the union itself.
 */
function deepestIssue(issue: Issue): Issue {
  if (issue.code !== 'invalid_union') return issue;
  let best: Issue = issue;
  let depth = 0;
  for (const [first] of issue.errors) {
    const inner = first && deepestIssue(first);
    if (inner && inner.path.length > depth) {
      best = { ...inner, path: [...issue.path, ...inner.path] };
      depth = inner.path.length;
    }
  }
  return best;
}

/** An OpenAI-style 400 for one schema problem: `param` names the field, dotted. */
function issueError(issue: Issue | undefined): ApiError {
  if (issue?.code === 'unrecognized_keys') {
    // Name the first unknown key itself, so a client can tell which parameter to drop.
    const key = issue.keys[0] ?? '';
    const hint = REPLACED_BY[key] ? `; ${REPLACED_BY[key]}` : '';
    const param = [...issue.path, key].join('.');
    return new ApiError('invalid_request', `unsupported parameter: ${issue.keys.join(', ')}${hint}`, {
      param,
    });
  }
  const param = issue?.path.join('.') ?? '';
  const message = `${param ? `${param}: ` : ''}${issue?.message ?? 'invalid request'}`;
  return new ApiError('invalid_request', message, param ? { param } : {});
}

/** Validates against a schema and renders the first problem as a 400 the way OpenAI does (param + message). */
export function validate<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const first = r.error.issues[0];
  throw issueError(first && deepestIssue(first));
}

export function parseChatRequest(raw: Buffer | null): ChatRequest {
  return validate(chatRequestSchema, parseJsonBody(raw));
}
