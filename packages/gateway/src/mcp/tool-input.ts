/**
 * A tool's arguments: their JSON Schema, their check (before anything is priced, so a
 * bad call is never asked to pay), and the HTTP request they stand for. The same
 * arguments always make the same request bytes (query in argument order, the body as
 * `JSON.stringify` writes it), so a paid retry hashes exactly like the call that was
 * quoted (requestHash, SPEC §2.6).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Endpoint } from '../store/store.ts';

type Json = Record<string, unknown>;

/**
 * `body`: the arguments are the JSON body. `query`: they are the query parameters.
 * `generic`: `{ query?, body? }`.
 */
export interface ToolInput {
  mode: 'body' | 'query' | 'generic';
  schema: Json;
  /** One sentence for the tool's description on how arguments become the request. */
  hint: string;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const isPlainObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

// Formats are not checked (the upstream does); `addUsedSchema: false` keeps providers' `$id`s apart.
const ajv = new Ajv2020({
  strict: false,
  allErrors: false,
  validateFormats: false,
  logger: false,
  addUsedSchema: false,
});

const scalar = { type: ['string', 'number', 'boolean'] };
const queryObject = {
  type: 'object',
  description: 'Query parameters (a list value repeats the parameter).',
  additionalProperties: { anyOf: [scalar, { type: 'array', items: scalar }] },
};

function genericInput(method: string): ToolInput {
  const body = BODY_METHODS.has(method);
  return {
    mode: 'generic',
    hint: body
      ? 'Arguments: `query` (query parameters) and `body` (the JSON body).'
      : 'Arguments: `query` (query parameters).',
    schema: {
      type: 'object',
      properties: {
        query: queryObject,
        ...(body ? { body: { description: 'The JSON request body.' } } : {}),
      },
      additionalProperties: false,
    },
  };
}

/** `$ref`/`$id` that leave the document: such a schema is not offered (nothing would resolve it). */
function external(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(external);
  if (!isPlainObject(node)) return false;
  for (const [k, v] of Object.entries(node)) {
    if ((k === '$ref' || k === '$id') && (typeof v !== 'string' || !v.startsWith('#'))) return true;
    if (external(v)) return true;
  }
  return false;
}

/**
 * A copy without `pattern`/`patternProperties` values: a provider's regular expression
 * is never run on a caller's input here (catastrophic backtracking); the upstream checks its own.
 */
function withoutPatterns(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutPatterns);
  if (!isPlainObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'pattern' && typeof v === 'string') continue;
    if (k === 'patternProperties' && isPlainObject(v)) continue;
    out[k] = withoutPatterns(v);
  }
  return out;
}

/** Compiled checks by schema text: endpoints without schemas share a few shapes, and snapshots repeat. */
const checks = new Map<string, ValidateFunction | null>();
const MAX_CHECKS = 1000;

function compile(schema: Json): ValidateFunction | null {
  const key = JSON.stringify(schema);
  if (checks.has(key)) return checks.get(key) ?? null;
  const copy = withoutPatterns(schema) as Json;
  let fn: ValidateFunction | null = null;
  try {
    fn = ajv.compile(copy);
  } catch {
    fn = null;
  } finally {
    // Ajv keeps every schema object it compiled; the function needs only itself.
    ajv.removeSchema(copy);
  }
  if (checks.size >= MAX_CHECKS) checks.delete(checks.keys().next().value as string);
  checks.set(key, fn);
  return fn;
}

/** Endpoint inputs by endpoint object (a catalogue reload keeps the object while the row is unchanged). */
const inputs = new WeakMap<Endpoint, ToolInput>();

export function endpointInput(e: Endpoint): ToolInput {
  const hit = inputs.get(e);
  if (hit) return hit;
  const method = e.method.toUpperCase();
  const body = BODY_METHODS.has(method) && method !== 'DELETE';
  const given = e.inputSchema;
  let input = genericInput(method);
  // The provider's schema describes an object (a body, or query parameters): it becomes the tool's.
  if (isPlainObject(given) && (given.type === undefined || given.type === 'object') && !external(given)) {
    const { $schema: _dialect, ...rest } = given;
    const schema: Json = { ...rest, type: 'object' };
    if (compile(schema)) {
      input = body
        ? { mode: 'body', schema, hint: 'Arguments: the JSON body.' }
        : { mode: 'query', schema, hint: 'Arguments: the query parameters.' };
    }
  }
  inputs.set(e, input);
  return input;
}

/** Why the arguments do not fit the tool's schema, or null when they do. */
export function argumentProblem(input: ToolInput, args: Json): string | null {
  const check = compile(input.schema);
  if (!check) return null;
  if (check(args)) return null;
  const e = check.errors?.[0];
  return `${e?.instancePath || '(arguments)'} ${e?.message ?? 'is invalid'}`.trim();
}

/** The HTTP request a tool call stands for: query string and body bytes. */
export function requestParts(input: ToolInput, args: Json): { query: string; body: Buffer | null } {
  if (input.mode === 'body') return { query: '', body: Buffer.from(JSON.stringify(args)) };
  if (input.mode === 'query') return { query: queryString(args), body: null };
  const query = isPlainObject(args.query) ? queryString(args.query) : '';
  return { query, body: args.body === undefined ? null : Buffer.from(JSON.stringify(args.body)) };
}

function queryString(params: Json): string {
  const q = new URLSearchParams();
  const text = (v: unknown) =>
    typeof v === 'string' ? v : v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, text(x));
    else q.append(k, text(v));
  }
  return q.toString();
}
