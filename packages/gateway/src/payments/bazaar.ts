/**
 * The x402 `bazaar` extension (DESIGN §4.12, x402 specs/extensions/bazaar.md) for one
 * paid resource: `{ info, schema }`, where `info` says how to call the resource (method,
 * an example query or JSON body, the output) and `schema` is a JSON Schema (draft 2020-12)
 * that `info` must satisfy. A 402 carries it in `PAYMENT-REQUIRED.extensions.bazaar`; the
 * stock client echoes it and a facilitator may catalogue the resource from it. Field
 * names follow `@x402/extensions`' `QueryDiscoveryInfo` / `BodyDiscoveryInfo`.
 *
 * The provider's `inputSchema` / `outputSchema` are documentation JSON of up to 16 KB
 * each that nobody checked as JSON Schema, so every extension built here is checked the
 * way a facilitator checks it (Ajv draft 2020-12, `strict: false`, no `$ref`/`$id` that
 * leaves the document) and falls back to a plainer form when it fails: a facilitator
 * that rejects the extension would not catalogue the resource. It also rides in a
 * response header, so it is kept under BAZAAR_MAX_BYTES of JSON (the full schemas are
 * in `/discovery/resources`). Built extensions are cached by endpoint id and updatedAt.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { embeddingsRequestSchema } from '../inference/embeddings-request.ts';
import type { Endpoint } from '../store/store.ts';

export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** Largest extension (JSON bytes) put into a 402: `PAYMENT-REQUIRED` is a header, and clients cap header size. */
export const BAZAAR_MAX_BYTES = 4096;

const QUERY_METHODS = ['GET', 'HEAD', 'DELETE'] as const;
const BODY_METHODS = ['POST', 'PUT', 'PATCH'] as const;
type QueryMethod = (typeof QUERY_METHODS)[number];
type BodyMethod = (typeof BODY_METHODS)[number];

type Json = Record<string, unknown>;

export interface BazaarOutput {
  type: string;
  format?: string;
  example?: unknown;
}

/** `info` for GET/HEAD/DELETE (`QueryDiscoveryInfo`). */
export interface BazaarQueryInfo {
  input: { type: 'http'; method: QueryMethod; queryParams?: Json; headers?: Record<string, string> };
  output?: BazaarOutput;
}

/** `info` for POST/PUT/PATCH (`BodyDiscoveryInfo`); Tollgate resources take JSON bodies. */
export interface BazaarBodyInfo {
  input: { type: 'http'; method: BodyMethod; bodyType: 'json'; body: Json; headers?: Record<string, string> };
  output?: BazaarOutput;
}

export interface BazaarExtension {
  info: BazaarQueryInfo | BazaarBodyInfo;
  schema: Json;
}

export type InferenceRoute = 'chat' | 'embeddings';

/** What bazaarExtension describes: a marketplace endpoint, or an inference route (with the model asked for, if known). */
export type BazaarTarget =
  | (Pick<Endpoint, 'method' | 'inputSchema' | 'outputSchema'> & Partial<Pick<Endpoint, 'id' | 'updatedAt'>>)
  | { inference: InferenceRoute; model?: string };

const isPlainObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

// ---------------------------------------------------------------------------
// Checking an extension as a facilitator does.

// As a facilitator's (strict off); formats are not checked there either, so say nothing about them.
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false, logger: false });

/** `$ref` / `$id` values that are not same-document fragments: facilitators refuse them (and so do we). */
function hasExternalReference(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasExternalReference);
  if (node === null || typeof node !== 'object') return false;
  for (const [key, value] of Object.entries(node)) {
    if ((key === '$ref' || key === '$id') && (typeof value !== 'string' || !value.startsWith('#')))
      return true;
    if (hasExternalReference(value)) return true;
  }
  return false;
}

/**
 * Whether `info` satisfies `schema` as a facilitator checks it (`validateDiscoveryExtension`
 * in `@x402/extensions`): no external references, compiles under draft 2020-12, validates.
 */
export function checkBazaarExtension(ext: { info: unknown; schema: unknown }): {
  valid: boolean;
  errors?: string[];
} {
  if (hasExternalReference(ext.schema)) {
    return { valid: false, errors: ['schema must not contain external $ref/$id references'] };
  }
  if (ext.schema === null || typeof ext.schema !== 'object') {
    return { valid: false, errors: ['schema must be an object'] };
  }
  const schema = ext.schema as Json;
  try {
    const validate = ajv.compile(schema);
    const valid = validate(ext.info);
    const errors = validate.errors?.map((e) => `${e.instancePath || '(root)'}: ${e.message ?? 'invalid'}`);
    return valid ? { valid: true } : { valid: false, errors: errors ?? ['invalid'] };
  } catch (e) {
    return {
      valid: false,
      errors: [`schema does not compile: ${e instanceof Error ? e.message : String(e)}`],
    };
  } finally {
    // Ajv keeps every compiled schema object: each extension is compiled once and let go.
    ajv.removeSchema(schema);
  }
}

// ---------------------------------------------------------------------------
// Embedding a provider's schema and deriving an example from it.

const MAX_PATTERN_LENGTH = 256;
/** Unbounded quantifiers a pattern may have: with short inputs (MAX_EXAMPLE_STRING) even overlapping ones stay cheap. */
const MAX_UNBOUNDED = 3;
/** Longest string an example may hold, so the patterns it meets run on short input. */
export const MAX_EXAMPLE_STRING = 256;

/**
 * Whether a provider's regular expression is safe to run (no catastrophic backtracking):
 * short, no backreferences or lookarounds, and no repeated group that itself contains a
 * quantifier or an alternation (`(a+)+`, `(a|aa)*`, `((ab)*c)+`). Conservative: some
 * harmless patterns are refused too, and their schema is then left out.
 */
export function isSafePattern(p: string): boolean {
  if (p.length > MAX_PATTERN_LENGTH) return false;
  if (/\\[1-9]|\\k<|\(\?<?[=!]/.test(p)) return false;
  const open: { inner: boolean }[] = [];
  let closed: { inner: boolean } | null = null;
  let prevQuantifier = false;
  let unbounded = 0;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    const atom = closed;
    closed = null;
    if (c === '\\') {
      i++;
      prevQuantifier = false;
      continue;
    }
    if (c === '[') {
      i++;
      if (p[i] === '^') i++;
      if (p[i] === ']') i++;
      while (i < p.length && p[i] !== ']') i += p[i] === '\\' ? 2 : 1;
      prevQuantifier = false;
      continue;
    }
    if (c === '(') {
      open.push({ inner: false });
      if (p[i + 1] === '?') i += 2; // (?: and (?<name>
      prevQuantifier = false;
      continue;
    }
    if (c === ')') {
      const group = open.pop();
      if (!group) return false;
      closed = group;
      prevQuantifier = false;
      continue;
    }
    if (c === '|') {
      for (const g of open) g.inner = true;
      prevQuantifier = false;
      continue;
    }
    if (c === '*' || c === '+' || c === '?' || c === '{') {
      if (c === '?' && prevQuantifier) continue; // lazy modifier
      const start = i;
      if (c === '{') {
        const end = p.indexOf('}', i);
        if (end < 0) return false;
        i = end;
      }
      // A repeated group that can match the same text in several ways.
      if (atom?.inner && c !== '?') return false;
      if (
        (c === '*' || c === '+' || /^\{\d*,\}$/.test(p.slice(start, i + 1))) &&
        ++unbounded > MAX_UNBOUNDED
      ) {
        return false;
      }
      for (const g of open) g.inner = true;
      prevQuantifier = true;
      continue;
    }
    prevQuantifier = false;
  }
  return open.length === 0;
}

/**
 * The provider's schema placed at `pointer` inside the extension's schema: `$schema`
 * dropped (only the root may name the dialect), `#/...` references rebased onto the new
 * location. Null when it cannot be embedded faithfully or safely (not an object,
 * external or dynamic references, `$id`, a pattern that could backtrack badly).
 */
export function embedSchema(schema: unknown, pointer: string): Json | null {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return null;
  let usable = true;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$schema') continue;
      if (key === '$id' || key === '$dynamicRef' || key === '$recursiveRef') usable = false;
      // Patterns run on examples here and at every facilitator: only ones that cannot backtrack badly.
      if (key === 'pattern' && typeof value === 'string' && !isSafePattern(value)) usable = false;
      if (key === 'patternProperties' && isPlainObject(value) && !Object.keys(value).every(isSafePattern)) {
        usable = false;
      }
      if (key === '$ref') {
        if (typeof value !== 'string' || !value.startsWith('#')) usable = false;
        else if (value === '#' || value.startsWith('#/')) {
          out[key] = `#${pointer}${value.slice(1)}`;
          continue;
        }
      }
      out[key] = walk(value);
    }
    return out;
  };
  const embedded = walk(schema) as Json;
  return usable ? embedded : null;
}

const MAX_EXAMPLE_DEPTH = 8;
const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '2025-01-01T00:00:00Z',
  date: '2025-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-4000-8000-000000000000',
};

/** The node a same-document pointer (`#/a/b`) names inside `root`, or undefined. */
function resolvePointer(root: unknown, ref: string): unknown {
  let node = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

/**
 * A small value meant to satisfy `schema`: its own example, default, const or first enum
 * value if it gives one, else one built from the type (objects get their required
 * properties only); `#/...` references resolve against `root`. A guess: callers check it
 * against the schema before using it.
 */
export function exampleFor(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (schema === true) return {};
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return undefined;
  const s = schema as Json;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('example' in s) return s.example;
  if ('default' in s) return s.default;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (depth >= MAX_EXAMPLE_DEPTH) return undefined;
  const next = (sub: unknown) => exampleFor(sub, root, depth + 1);
  if (typeof s.$ref === 'string' && s.$ref.startsWith('#/')) return next(resolvePointer(root, s.$ref));
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0 && s.type === undefined && !s.properties) {
      return next(options[0]);
    }
  }
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const type = types.find((t) => t !== 'null') ?? (s.properties ? 'object' : s.items ? 'array' : undefined);
  switch (type) {
    case 'object': {
      const out: Json = {};
      const props = (s.properties ?? {}) as Json;
      const required = Array.isArray(s.required) ? s.required : [];
      for (const name of required) {
        if (typeof name === 'string') out[name] = next(props[name] ?? {}) ?? null;
      }
      return out;
    }
    case 'array': {
      const min = typeof s.minItems === 'number' ? Math.min(s.minItems, 3) : 0;
      return Array.from({ length: min }, () => next(s.items ?? {}) ?? null);
    }
    case 'string': {
      const byFormat = typeof s.format === 'string' ? FORMAT_EXAMPLES[s.format] : undefined;
      if (byFormat) return byFormat;
      const min = typeof s.minLength === 'number' ? s.minLength : 0;
      const max = typeof s.maxLength === 'number' ? s.maxLength : Number.POSITIVE_INFINITY;
      if (min > MAX_EXAMPLE_STRING) return undefined;
      return min <= 6 && max >= 6 ? 'string' : 'x'.repeat(Math.max(min, 1));
    }
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? Math.ceil(s.minimum) : 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return types.includes('null') ? null : undefined;
  }
}

// ---------------------------------------------------------------------------
// Building the extension.

const inputHttp = { type: 'string', const: 'http' };
const outputEnvelope = (example?: Json) => ({
  type: 'object',
  properties: { type: { type: 'string' }, ...(example ? { example } : {}) },
  required: ['type'],
});

interface Parts {
  method: QueryMethod | BodyMethod;
  /** Query methods: schema of the query parameters. Body methods: schema of the JSON body. */
  inputSchema: Json | null;
  /** An example of the query parameters or body (must satisfy inputSchema). */
  inputExample: Json | undefined;
  /** Schema of the response, placed as the schema of `info.output.example`. */
  outputSchema: Json | null;
  outputExample: unknown;
}

function assemble(p: Parts): BazaarExtension {
  const isBody = (BODY_METHODS as readonly string[]).includes(p.method);
  const output: BazaarOutput | undefined =
    p.outputSchema || p.outputExample !== undefined
      ? { type: 'json', ...(p.outputExample !== undefined ? { example: p.outputExample } : {}) }
      : undefined;
  const outputSchema = output ? { output: outputEnvelope(p.outputSchema ?? { type: 'object' }) } : {};
  if (isBody) {
    return {
      info: {
        input: { type: 'http', method: p.method as BodyMethod, bodyType: 'json', body: p.inputExample ?? {} },
        ...(output ? { output } : {}),
      },
      schema: {
        $schema: JSON_SCHEMA_2020_12,
        type: 'object',
        properties: {
          input: {
            type: 'object',
            properties: {
              type: inputHttp,
              method: { type: 'string', enum: [p.method] },
              bodyType: { type: 'string', enum: ['json'] },
              body: p.inputSchema ?? { type: 'object' },
              headers: { type: 'object', additionalProperties: { type: 'string' } },
            },
            required: ['type', 'method', 'bodyType', 'body'],
            additionalProperties: false,
          },
          ...outputSchema,
        },
        required: ['input'],
      },
    };
  }
  return {
    info: {
      input: {
        type: 'http',
        method: p.method as QueryMethod,
        ...(p.inputExample !== undefined ? { queryParams: p.inputExample } : {}),
      },
      ...(output ? { output } : {}),
    },
    schema: {
      $schema: JSON_SCHEMA_2020_12,
      type: 'object',
      properties: {
        input: {
          type: 'object',
          properties: {
            type: inputHttp,
            method: { type: 'string', enum: [p.method] },
            queryParams: p.inputSchema ?? { type: 'object' },
            headers: { type: 'object', additionalProperties: { type: 'string' } },
          },
          required: ['type', 'method'],
          additionalProperties: false,
        },
        ...outputSchema,
      },
      required: ['input'],
    },
  };
}

/** Whether every string (and key) in an example is at most MAX_EXAMPLE_STRING long. */
function shortStrings(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return v.length <= MAX_EXAMPLE_STRING;
  if (depth > MAX_EXAMPLE_DEPTH * 4) return false;
  if (Array.isArray(v)) return v.every((x) => shortStrings(x, depth + 1));
  if (isPlainObject(v)) {
    return Object.entries(v).every(([k, x]) => k.length <= MAX_EXAMPLE_STRING && shortStrings(x, depth + 1));
  }
  return true;
}

const BODY_POINTER = '/properties/input/properties/body';
const QUERY_POINTER = '/properties/input/properties/queryParams';
const OUTPUT_POINTER = '/properties/output/properties/example';

/** Verdicts by the extension's JSON: endpoints without schemas share a handful of shapes, checked once. */
const verdicts = new Map<string, boolean>();
const MAX_VERDICTS = 1000;

function fits(ext: BazaarExtension): boolean {
  const json = JSON.stringify(ext);
  if (Buffer.byteLength(json, 'utf8') > BAZAAR_MAX_BYTES) return false;
  let ok = verdicts.get(json);
  if (ok === undefined) {
    ok = checkBazaarExtension(ext).valid;
    if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value as string);
    verdicts.set(json, ok);
  }
  return ok;
}

function endpointExtension(
  e: Pick<Endpoint, 'method' | 'inputSchema' | 'outputSchema'>,
): BazaarExtension | null {
  const method = e.method.toUpperCase();
  const isBody = (BODY_METHODS as readonly string[]).includes(method);
  if (!isBody && !(QUERY_METHODS as readonly string[]).includes(method)) return null;
  const m = method as QueryMethod | BodyMethod;

  let inputSchema = embedSchema(e.inputSchema, isBody ? BODY_POINTER : QUERY_POINTER);
  // Query parameters are an object by nature; a schema of anything else cannot describe them.
  if (inputSchema && !isBody) {
    inputSchema =
      inputSchema.type === undefined || inputSchema.type === 'object'
        ? { type: 'object', ...inputSchema }
        : null;
  }
  const guess = inputSchema ? exampleFor(e.inputSchema) : undefined;
  const inputExample = isPlainObject(guess) && shortStrings(guess) ? guess : undefined;
  const outputSchema = embedSchema(e.outputSchema, OUTPUT_POINTER);
  const stated = isPlainObject(e.outputSchema)
    ? Array.isArray(e.outputSchema.examples)
      ? e.outputSchema.examples[0]
      : e.outputSchema.example
    : undefined;
  const given = shortStrings(stated) ? stated : undefined;

  // Richest first, input before output; each step drops what fails the facilitator's
  // check or does not fit a header. A body is required in `info`, so a body schema
  // goes with an example (ours, or `{}`), never without.
  const inputs: Pick<Parts, 'inputSchema' | 'inputExample'>[] = [
    ...(inputSchema && inputExample ? [{ inputSchema, inputExample }] : []),
    ...(inputSchema ? [{ inputSchema, inputExample: isBody ? {} : undefined }] : []),
    { inputSchema: null, inputExample: isBody ? {} : undefined },
  ];
  const outputs: Pick<Parts, 'outputSchema' | 'outputExample'>[] = [
    ...(outputSchema && given !== undefined ? [{ outputSchema, outputExample: given }] : []),
    ...(outputSchema ? [{ outputSchema, outputExample: undefined }] : []),
    { outputSchema: null, outputExample: undefined },
  ];
  for (const input of inputs) {
    for (const output of outputs) {
      const ext = assemble({ method: m, ...input, ...output });
      if (fits(ext)) return ext;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// Inference routes.

/** A compact schema of the chat-completions body (the route validates the full set; see docs/inference.md). */
const CHAT_BODY_SCHEMA: Json = {
  type: 'object',
  description:
    'OpenAI chat-completions request. Only parameters whose cost can be bounded are accepted; text content only.',
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 256 },
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: 10000,
      items: {
        type: 'object',
        properties: {
          role: { enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
          content: { anyOf: [{ type: 'string' }, { type: 'array' }, { type: 'null' }] },
        },
        required: ['role'],
      },
    },
    max_tokens: { type: ['integer', 'null'], minimum: 1 },
    max_completion_tokens: { type: ['integer', 'null'], minimum: 1 },
    stream: { type: ['boolean', 'null'] },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    n: { type: ['integer', 'null'], minimum: 1, maximum: 8 },
  },
  required: ['model', 'messages'],
};

/** The embeddings body schema, derived from the validator the route uses. */
const EMBEDDINGS_BODY_SCHEMA: Json = (() => {
  const { $schema: _, ...schema } = z.toJSONSchema(embeddingsRequestSchema, {
    target: 'draft-2020-12',
    io: 'input',
  }) as Json;
  return schema;
})();

const DEFAULT_MODEL = 'MODEL_ID';

function inferenceExtension(route: InferenceRoute, model = DEFAULT_MODEL): BazaarExtension | null {
  const parts: Parts =
    route === 'chat'
      ? {
          method: 'POST',
          inputSchema: CHAT_BODY_SCHEMA,
          inputExample: { model, messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 64 },
          outputSchema: null,
          outputExample: {
            object: 'chat.completion',
            model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
          },
        }
      : {
          method: 'POST',
          inputSchema: EMBEDDINGS_BODY_SCHEMA,
          inputExample: { model, input: 'The quick brown fox' },
          outputSchema: null,
          outputExample: {
            object: 'list',
            model,
            data: [{ object: 'embedding', index: 0, embedding: [0.0123, -0.0456] }],
            usage: { prompt_tokens: 4, total_tokens: 4 },
          },
        };
  const ext = assemble(parts);
  if (fits(ext)) return ext;
  const plain = assemble({ ...parts, outputExample: undefined });
  return fits(plain) ? plain : null;
}

// ---------------------------------------------------------------------------

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const MAX_CACHED = 10_000;
const cache = new Map<string, BazaarExtension | null>();

/**
 * The `extensions.bazaar` object for a 402 of this endpoint or inference route, or null
 * when the resource cannot be described (an OPTIONS endpoint). Always valid against its
 * own schema and at most BAZAAR_MAX_BYTES of JSON. Cached by endpoint id and updatedAt
 * (by route and model for inference); the result is shared and frozen.
 */
export function bazaarExtension(target: BazaarTarget): BazaarExtension | null {
  const key =
    'inference' in target
      ? `inf:${target.inference}:${target.model ?? ''}`
      : target.id && target.updatedAt
        ? `ep:${target.id}:${target.updatedAt}`
        : null;
  if (key !== null && cache.has(key)) return cache.get(key) ?? null;
  const built =
    'inference' in target ? inferenceExtension(target.inference, target.model) : endpointExtension(target);
  // A copy of its own (examples may be the provider's objects), frozen: it is shared by every 402.
  const ext = built ? (deepFreeze(JSON.parse(JSON.stringify(built))) as BazaarExtension) : null;
  if (key !== null) {
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(key, ext);
  }
  return ext;
}

/** `{ bazaar }` for `PAYMENT-REQUIRED.extensions`, or undefined when there is nothing to declare. */
export function bazaarExtensions(target: BazaarTarget): { bazaar: BazaarExtension } | undefined {
  const ext = bazaarExtension(target);
  return ext ? { bazaar: ext } : undefined;
}
