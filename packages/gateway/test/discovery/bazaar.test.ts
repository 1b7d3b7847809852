/**
 * bazaarExtension: the `extensions.bazaar` of a 402 is valid the way a facilitator checks
 * it (`@x402/extensions`' own validator, Ajv draft 2020-12), carries the provider's
 * schemas where they can be used, falls back where they cannot, and fits a header.
 */
import {
  bazaarResourceServerExtension,
  declareDiscoveryExtension,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
} from '@x402/extensions/bazaar';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { chatRequestSchema } from '../../src/inference/chat-request.ts';
import { embeddingsRequestSchema } from '../../src/inference/embeddings-request.ts';
import {
  BAZAAR_MAX_BYTES,
  type BazaarExtension,
  type BazaarTarget,
  bazaarExtension,
  bazaarExtensions,
  checkBazaarExtension,
  embedSchema,
  exampleFor,
  isSafePattern,
} from '../../src/payments/bazaar.ts';

type Json = Record<string, unknown>;

/** Valid by our check, by @x402/extensions' validator and by its spec check; under the size cap. */
function expectValid(ext: BazaarExtension | null): asserts ext is BazaarExtension {
  expect(ext).not.toBeNull();
  expect(checkBazaarExtension(ext!)).toEqual({ valid: true });
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's union type is narrower than our builder's
  expect(validateDiscoveryExtension(ext as any)).toEqual({ valid: true });
  expect(validateDiscoveryExtensionSpec(ext as unknown as Json)).toEqual({ valid: true });
  // An independent Ajv, as the facilitator builds it.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  expect(ajv.compile(ext!.schema)(ext!.info)).toBe(true);
  expect(Buffer.byteLength(JSON.stringify(ext))).toBeLessThanOrEqual(BAZAAR_MAX_BYTES);
}

const input = (ext: BazaarExtension) => ext.info.input as Json;
const inputProps = (ext: BazaarExtension) =>
  ((ext.schema.properties as Json).input as { properties: Json }).properties;

/** The SDK's own declaration for the same endpoint, enriched with the method as its server does. */
function sdkDeclaration(method: string, config: Json): { info: unknown; schema: unknown } {
  const declared = declareDiscoveryExtension(config as never).bazaar;
  return bazaarResourceServerExtension.enrichDeclaration!(declared, {
    method,
    adapter: { getPath: () => '/x' },
  } as never) as { info: unknown; schema: unknown };
}

let seq = 0;
const endpoint = (
  method: string,
  inputSchema: unknown = null,
  outputSchema: unknown = null,
): BazaarTarget => ({
  id: `ep_${++seq}`,
  updatedAt: new Date(0).toISOString(),
  method,
  inputSchema,
  outputSchema,
});

const weatherQuery = {
  type: 'object',
  properties: { city: { type: 'string', minLength: 1 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['city', 'days'],
};
const forecast = {
  type: 'object',
  properties: { city: { type: 'string' }, temperatureC: { type: 'number' } },
  required: ['city'],
  examples: [{ city: 'Oslo', temperatureC: 4 }],
};

describe('bazaarExtension for a marketplace endpoint', () => {
  it('GET: the inputSchema describes queryParams, with an example that satisfies it', () => {
    const ext = bazaarExtension(endpoint('GET', weatherQuery, forecast));
    expectValid(ext);
    expect(input(ext)).toEqual({
      type: 'http',
      method: 'GET',
      queryParams: { city: 'string', days: 1 },
    });
    expect(inputProps(ext).queryParams).toMatchObject({ type: 'object', required: ['city', 'days'] });
    // The output schema is the schema of `output.example`; the provider's own example is used.
    expect(ext.info.output).toEqual({ type: 'json', example: { city: 'Oslo', temperatureC: 4 } });
    const output = (ext.schema.properties as Json).output as { properties: { example: Json } };
    expect(output.properties.example).toMatchObject({ required: ['city'] });
  });

  it('POST: the inputSchema is the JSON body schema, and the body example satisfies it', () => {
    const order = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        sku: { type: 'string', pattern: '^[A-Z]+$', examples: ['ABC'] },
        quantity: { type: 'integer', minimum: 1 },
        email: { type: 'string', format: 'email' },
        gift: { type: 'boolean' },
      },
      required: ['sku', 'quantity', 'email'],
      additionalProperties: false,
    };
    const ext = bazaarExtension(endpoint('POST', order));
    expectValid(ext);
    expect(input(ext)).toEqual({
      type: 'http',
      method: 'POST',
      bodyType: 'json',
      body: { sku: 'ABC', quantity: 1, email: 'user@example.com' },
    });
    // `$schema` of a draft-07 provider schema is dropped inside the 2020-12 document.
    expect(inputProps(ext).body).not.toHaveProperty('$schema');
    expect(ext.info.output).toBeUndefined();
  });

  it('matches the SDK: our info validates against the schema declareDiscoveryExtension builds', () => {
    const get = bazaarExtension(endpoint('GET', weatherQuery));
    expectValid(get);
    const sdkGet = sdkDeclaration('GET', { input: input(get).queryParams, inputSchema: weatherQuery });
    expect(validateDiscoveryExtension({ info: get.info, schema: sdkGet.schema } as never)).toEqual({
      valid: true,
    });
    // And the SDK's info has exactly our shape.
    expect(sdkGet.info).toEqual(get.info);

    const body = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    const post = bazaarExtension(endpoint('PUT', body));
    expectValid(post);
    const sdkPost = sdkDeclaration('PUT', { input: input(post).body, inputSchema: body, bodyType: 'json' });
    expect(validateDiscoveryExtension({ info: post.info, schema: sdkPost.schema } as never)).toEqual({
      valid: true,
    });
    expect(sdkPost.info).toEqual(post.info);
  });

  it('HEAD and DELETE are query methods; without schemas the extension still declares the method', () => {
    for (const method of ['HEAD', 'DELETE', 'GET']) {
      const ext = bazaarExtension(endpoint(method));
      expectValid(ext);
      expect(input(ext)).toEqual({ type: 'http', method });
    }
    const patch = bazaarExtension(endpoint('PATCH'));
    expectValid(patch);
    expect(input(patch)).toEqual({ type: 'http', method: 'PATCH', bodyType: 'json', body: {} });
  });

  it('OPTIONS cannot be described: null, and bazaarExtensions gives nothing to declare', () => {
    expect(bazaarExtension(endpoint('OPTIONS', weatherQuery))).toBeNull();
    expect(bazaarExtensions(endpoint('OPTIONS'))).toBeUndefined();
    const ext = bazaarExtensions(endpoint('GET'));
    expect(Object.keys(ext!)).toEqual(['bazaar']);
  });

  it('rebases same-document references so a schema with definitions keeps working', () => {
    const schema = {
      $ref: '#/definitions/Order',
      definitions: {
        Order: {
          type: 'object',
          properties: { item: { $ref: '#/definitions/Item' } },
          required: ['item'],
        },
        Item: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      },
    };
    const ext = bazaarExtension(endpoint('POST', schema));
    expectValid(ext);
    expect(input(ext).body).toEqual({ item: { id: 'string' } });
    expect((inputProps(ext).body as Json).$ref).toBe('#/properties/input/properties/body/definitions/Order');
  });

  it('falls back to a plain description when the provider schema cannot be used as given', () => {
    const unusable: unknown[] = [
      { $ref: 'https://example.com/schema.json' }, // external: facilitators refuse it
      { $id: 'https://example.com/order', type: 'object' },
      { type: 'object', properties: { a: { $ref: 'other.json#/x' } } },
      { type: 'not-a-type' }, // does not compile
      { type: 'object', required: 'oops' },
      ['not', 'an', 'object'],
      'a string',
      42,
    ];
    for (const schema of unusable) {
      const post = bazaarExtension(endpoint('POST', schema, schema));
      expectValid(post);
      expect(inputProps(post).body).toEqual({ type: 'object' });
      expect(input(post).body).toEqual({});
      expect(post.info.output).toBeUndefined();
      const get = bazaarExtension(endpoint('GET', schema));
      expectValid(get);
      expect(inputProps(get).queryParams).toEqual({ type: 'object' });
    }
  });

  it('keeps a schema whose example it cannot guess, without an example (query) or with {} (body) when {} fits', () => {
    // A pattern the guess does not satisfy: GET keeps the schema and sends no example.
    const strict = {
      type: 'object',
      properties: { code: { type: 'string', pattern: '^[0-9]{4}$' } },
      required: ['code'],
    };
    const get = bazaarExtension(endpoint('GET', strict));
    expectValid(get);
    expect(input(get)).toEqual({ type: 'http', method: 'GET' });
    expect(inputProps(get).queryParams).toMatchObject({ required: ['code'] });
    // For a body, an unguessable required field means the body schema is left out.
    const post = bazaarExtension(endpoint('POST', strict));
    expectValid(post);
    expect(inputProps(post).body).toEqual({ type: 'object' });
    // An optional-only schema keeps the schema with an empty body.
    const optional = { type: 'object', properties: { code: strict.properties.code } };
    const post2 = bazaarExtension(endpoint('POST', optional));
    expectValid(post2);
    expect(input(post2).body).toEqual({});
    expect(inputProps(post2).body).toMatchObject({ properties: { code: { pattern: '^[0-9]{4}$' } } });
  });

  it('a non-object query schema is not used for queryParams', () => {
    const ext = bazaarExtension(endpoint('GET', { type: 'string' }));
    expectValid(ext);
    expect(inputProps(ext).queryParams).toEqual({ type: 'object' });
  });

  it('stays under BAZAAR_MAX_BYTES: the output schema goes first, then the input schema', () => {
    const big = (n: number) => ({
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`field_${i}`, { type: 'string', description: 'x'.repeat(40) }]),
      ),
      required: ['field_0'],
    });
    const small = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    const a = bazaarExtension(endpoint('POST', small, big(200)));
    expectValid(a);
    expect(input(a).body).toEqual({ q: 'string' });
    expect(a.info.output).toBeUndefined();
    const b = bazaarExtension(endpoint('POST', big(200), big(200)));
    expectValid(b);
    expect(inputProps(b).body).toEqual({ type: 'object' });
  });

  it('caches by endpoint id and updatedAt: an edit gives a new extension', () => {
    const e = {
      id: 'ep_cache',
      updatedAt: '2026-01-01T00:00:00.000Z',
      method: 'GET',
      inputSchema: null,
      outputSchema: null,
    };
    const first = bazaarExtension(e);
    expect(bazaarExtension({ ...e })).toBe(first);
    const edited = bazaarExtension({
      ...e,
      updatedAt: '2026-01-02T00:00:00.000Z',
      inputSchema: weatherQuery,
    });
    expect(edited).not.toBe(first);
    expectValid(edited);
    expect(input(edited).queryParams).toEqual({ city: 'string', days: 1 });
  });
});

describe('provider patterns', () => {
  it('isSafePattern refuses patterns that can backtrack badly, keeps ordinary ones', () => {
    for (const p of [
      '^[A-Z]{3}$',
      '^[a-z0-9-]+$',
      '^\\d{4}-\\d{2}-\\d{2}$',
      '^(?:https?)://[^/]+$',
      '^(ab)?c+$',
      '^[a-z]+-[a-z]+-[0-9]+$',
      '^(foo|bar)$',
      'a+?b',
    ]) {
      expect({ p, safe: isSafePattern(p) }).toEqual({ p, safe: true });
    }
    for (const p of [
      '^(a+)+$',
      '(a*)*b',
      '((ab)*c)+',
      '(a|aa)+$',
      '(x+x+)+y',
      '^(\\w+\\s?)*$',
      '(.*a){12}',
      '(a)\\1',
      '(?=a)a',
      '.*.*.*.*=',
      '(unclosed',
      'a{2',
      'x'.repeat(300),
    ]) {
      expect({ p, safe: isSafePattern(p) }).toEqual({ p, safe: false });
    }
  });

  it('a schema with an unsafe pattern is left out (its example is never run against it)', () => {
    const evil = {
      type: 'object',
      properties: { s: { type: 'string', pattern: '^(a+)+$', examples: [`${'a'.repeat(40)}!`] } },
      required: ['s'],
    };
    const post = bazaarExtension(endpoint('POST', evil, evil));
    expectValid(post);
    expect(inputProps(post).body).toEqual({ type: 'object' });
    expect(post.info.output).toBeUndefined();
    const keys = bazaarExtension(endpoint('GET', { type: 'object', patternProperties: { '(a*)*$': {} } }));
    expectValid(keys);
    expect(inputProps(keys).queryParams).toEqual({ type: 'object' });
  });

  it('examples with long strings are not used (patterns only ever meet short input)', () => {
    const schema = {
      type: 'object',
      properties: { s: { type: 'string', examples: ['y'.repeat(300)] } },
      required: ['s'],
    };
    const get = bazaarExtension(endpoint('GET', schema));
    expectValid(get);
    expect(input(get)).toEqual({ type: 'http', method: 'GET' });
  });

  it('the result is frozen and detached from the endpoint’s own objects', () => {
    const example = { city: 'Oslo' };
    const schema = { type: 'object', properties: { city: { type: 'string' } }, examples: [example] };
    const ext = bazaarExtension(endpoint('GET', schema))!;
    expect(input(ext).queryParams).toEqual(example);
    expect(input(ext).queryParams).not.toBe(example);
    expect(Object.isFrozen(ext.info.input)).toBe(true);
    expect(Object.isFrozen(example)).toBe(false);
  });
});

describe('bazaarExtension for the inference routes', () => {
  it('chat: a POST JSON body the route itself accepts, and an OpenAI-shaped output example', () => {
    const ext = bazaarExtension({ inference: 'chat', model: 'tollgate-dev-chat' });
    expectValid(ext);
    const body = input(ext).body as Json;
    expect(input(ext)).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json' });
    expect(body.model).toBe('tollgate-dev-chat');
    expect(chatRequestSchema.safeParse(body).success).toBe(true);
    expect(ext.info.output).toMatchObject({ type: 'json', example: { object: 'chat.completion' } });
  });

  it('embeddings: the body schema is the route validator’s, and the example passes it', () => {
    const ext = bazaarExtension({ inference: 'embeddings', model: 'universal-sentence-encoder-lite' });
    expectValid(ext);
    expect(embeddingsRequestSchema.safeParse(input(ext).body).success).toBe(true);
    expect(inputProps(ext).body).toMatchObject({ required: ['model', 'input'], additionalProperties: false });
  });

  it('works without a model (a placeholder id)', () => {
    expectValid(bazaarExtension({ inference: 'chat' }));
    expectValid(bazaarExtension({ inference: 'embeddings' }));
  });
});

describe('building blocks', () => {
  it('embedSchema rebases #/ references, keeps anchors, drops $schema, refuses external ones', () => {
    expect(embedSchema({ $schema: 'x', $ref: '#' }, '/p')).toEqual({ $ref: '#/p' });
    expect(embedSchema({ items: { $ref: '#/$defs/a' } }, '/p')).toEqual({ items: { $ref: '#/p/$defs/a' } });
    expect(embedSchema({ $ref: '#anchor' }, '/p')).toEqual({ $ref: '#anchor' });
    expect(embedSchema({ $ref: 'http://x/y' }, '/p')).toBeNull();
    expect(embedSchema({ $dynamicRef: '#meta' }, '/p')).toBeNull();
    expect(embedSchema(null, '/p')).toBeNull();
  });

  it('exampleFor prefers the schema’s own examples, then builds from types', () => {
    expect(exampleFor({ type: 'string', examples: ['a'] })).toBe('a');
    expect(exampleFor({ type: 'integer', default: 5 })).toBe(5);
    expect(exampleFor({ enum: ['x', 'y'] })).toBe('x');
    expect(exampleFor({ type: 'array', items: { type: 'number' }, minItems: 2 })).toEqual([0, 0]);
    expect(exampleFor({ type: ['null', 'boolean'] })).toBe(false);
    expect(exampleFor({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toBe('string');
    expect(exampleFor({ type: 'string', minLength: 10 })).toBe('xxxxxxxxxx');
    // Self-recursive schemas end.
    const tree = { type: 'object', properties: { child: { $ref: '#' } }, required: ['child'] };
    expect(() => exampleFor(tree)).not.toThrow();
  });
});
