/** JSON schemas of the provider API bodies (strict: unknown fields and wrong types are 400). */

import { objectSchema } from '../http/providers/strict-schema.ts';
import { CATEGORY_PATTERN, ENDPOINT_METHODS, MAX_PATH_LENGTH, SLUG_PATTERN } from './rules.ts';

const str = (minLength: number, maxLength: number) => ({ type: 'string', minLength, maxLength });
const chain = { type: 'string', enum: ['sui', 'solana'] };

const owner = objectSchema({ chain, address: str(1, 128) }, ['chain', 'address']);

export const projectCreateBody = objectSchema(
  {
    slug: { type: 'string', pattern: SLUG_PATTERN },
    name: str(1, 100),
    description: str(0, 2000),
    category: { type: 'string', pattern: CATEGORY_PATTERN },
    owner,
    x402Exact: { type: 'boolean' },
  },
  ['slug', 'name'],
);

export const projectPatchBody = objectSchema(
  {
    name: str(1, 100),
    description: str(0, 2000),
    category: { type: 'string', pattern: CATEGORY_PATTERN },
    x402Exact: { type: 'boolean' },
  },
  [],
  { minProperties: 1 },
);

const originAuth = objectSchema(
  { type: { type: 'string', enum: ['bearer', 'header', 'query'] }, name: str(1, 64), secret: str(1, 4096) },
  ['type', 'secret'],
);

export const apiCreateBody = objectSchema({ name: str(1, 100), baseUrl: str(1, 2048), auth: originAuth }, [
  'name',
  'baseUrl',
]);

export const apiPatchBody = objectSchema(
  { name: str(1, 100), baseUrl: str(1, 2048), auth: { anyOf: [originAuth, { type: 'null' }] } },
  [],
  { minProperties: 1 },
);

const jsonObjectOrNull = { type: ['object', 'null'] };
const endpointFields = {
  apiId: str(1, 64),
  method: { type: 'string', enum: ENDPOINT_METHODS },
  // One optional leading slash on top of the registered length.
  path: str(1, MAX_PATH_LENGTH + 1),
  price: str(1, 32),
  description: str(0, 1000),
  timeoutMs: { type: 'integer', minimum: 100, maximum: 120_000 },
  enabled: { type: 'boolean' },
  inputSchema: jsonObjectOrNull,
  outputSchema: jsonObjectOrNull,
};

export const endpointCreateBody = objectSchema(endpointFields, ['apiId', 'method', 'path', 'price']);
export const endpointPatchBody = objectSchema(endpointFields, [], { minProperties: 1 });

export const railPutBody = objectSchema({ network: str(1, 32), providerRecipient: str(1, 128) }, [
  'network',
  'providerRecipient',
]);

export const railParams = objectSchema({ slug: str(1, 512), chain }, ['slug', 'chain']);
