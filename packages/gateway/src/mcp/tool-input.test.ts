import { describe, expect, it } from 'vitest';
import type { Endpoint } from '../store/store.ts';
import { argumentProblem, endpointInput, requestParts } from './tool-input.ts';

const endpoint = (method: string, inputSchema: unknown = null): Endpoint => ({
  id: 'e1',
  projectId: 'p1',
  apiId: 'a1',
  method,
  path: 'x',
  price: 10n,
  endpointType: 'external_proxy',
  description: '',
  timeoutMs: 1000,
  enabled: true,
  inputSchema,
  outputSchema: null,
  createdAt: '',
  updatedAt: '',
});

describe('tool arguments', () => {
  it("take the provider's schema as the JSON body of a POST, and check it", () => {
    const input = endpointInput(
      endpoint('POST', {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        properties: { qty: { type: 'integer' } },
        required: ['qty'],
      }),
    );
    expect(input.mode).toBe('body');
    expect(input.schema).toMatchObject({ type: 'object', required: ['qty'] });
    expect(input.schema).not.toHaveProperty('$schema');
    expect(argumentProblem(input, { qty: 2 })).toBeNull();
    expect(argumentProblem(input, { qty: 'two' })).toMatch(/qty.*integer/);
    expect(argumentProblem(input, {})).toMatch(/qty/);
    expect(requestParts(input, { qty: 2 })).toEqual({ query: '', body: Buffer.from('{"qty":2}') });
  });

  it("take the provider's schema as the query parameters of a GET, in argument order", () => {
    const input = endpointInput(
      endpoint('GET', { type: 'object', properties: { city: { type: 'string' } } }),
    );
    expect(input.mode).toBe('query');
    expect(requestParts(input, { city: 'Oslo Sentrum', n: 3, tags: ['a', 'b'] })).toEqual({
      query: 'city=Oslo+Sentrum&n=3&tags=a&tags=b',
      body: null,
    });
  });

  it('fall back to the generic { query, body } for a schema that is not an object or leaves the document', () => {
    for (const schema of [{ type: 'array' }, { $ref: 'https://example.com/s.json' }, 'text', null]) {
      const input = endpointInput(endpoint('POST', schema));
      expect(input.mode).toBe('generic');
      expect(argumentProblem(input, { query: { a: '1' }, body: [1, 2] })).toBeNull();
      expect(argumentProblem(input, { other: 1 })).toMatch(/additional/);
      expect(requestParts(input, { query: { a: '1' }, body: [1, 2] })).toEqual({
        query: 'a=1',
        body: Buffer.from('[1,2]'),
      });
    }
    expect(endpointInput(endpoint('GET')).schema).not.toHaveProperty('properties.body');
  });

  it("never runs a provider's pattern on a caller's input", () => {
    const input = endpointInput(
      endpoint('POST', { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } }),
    );
    // Run, this pattern would backtrack for hours on this input (the test would time out).
    expect(argumentProblem(input, { s: `${'a'.repeat(40)}!` })).toBeNull();
    // The pattern is still advertised: the upstream checks it.
    expect(input.schema).toMatchObject({ properties: { s: { pattern: '^(a+)+$' } } });
  });
});
