/**
 * The JSON Schemas the OpenAPI document shares between operations, each made from the
 * definition the gateway itself uses, never a copy kept by hand: the 402 body from
 * @tollgate/protocol's zod schema, the payment headers' JSON from the proof and receipt
 * schemas, the error envelopes from the code registry and OpenAI's error types in
 * errors.ts, the MCP transport's JSON-RPC error from the MCP SDK's zod schema. The OpenAPI tests validate real responses against these same schemas.
 */

import { JSONRPCErrorResponseSchema, RequestIdSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  ERROR_CODES,
  paymentProofSchema,
  paymentReceiptSchema,
  paymentRequirementSchema,
} from '@tollgate/protocol';
import { z } from 'zod';
import { OPENAI_ERROR_TYPE } from '../errors.ts';

export type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema (2020-12, OpenAPI 3.1's dialect) of what a zod schema accepts as
 * input. Parts JSON Schema cannot express (a transform's output) become `{}`: the
 * document then says less than the validator, never something it would refuse.
 */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
}

const codes = [...ERROR_CODES];
const openAiTypes = [...new Set(Object.values(OPENAI_ERROR_TYPE))];

/** Fields the renderer adds to many errors (docs/errors.md); others may appear. */
const commonExtras = {
  reason: { type: 'string', description: 'A finer, stable cause (snake_case), where the code has several.' },
  retryable: { type: 'boolean', description: 'True when the same request (and payment) may be sent again.' },
};

/** Tollgate's flat error body (errors.ts `errorBody`). */
export const errorSchema: JsonSchema = {
  type: 'object',
  description: 'Tollgate error body (docs/errors.md).',
  properties: {
    error: { type: 'string', enum: codes },
    message: { type: 'string' },
    requestId: { type: 'string' },
    ...commonExtras,
  },
  required: ['error', 'message', 'requestId'],
  additionalProperties: true,
};

/** OpenAI's envelope on the OpenAI-style /v1 routes (errors.ts `openAiErrorBody`). */
export const openAiErrorSchema: JsonSchema = {
  type: 'object',
  description: 'OpenAI-style error envelope (docs/errors.md); `retryable` is repeated at the top level.',
  properties: {
    error: {
      type: 'object',
      properties: {
        message: { type: 'string' },
        type: { type: 'string', enum: openAiTypes },
        code: { type: 'string', enum: codes },
        param: { type: ['string', 'null'] },
        ...commonExtras,
      },
      required: ['message', 'type', 'code', 'param'],
      additionalProperties: true,
    },
    retryable: { type: 'boolean' },
    requestId: { type: 'string' },
  },
  required: ['error', 'requestId'],
  additionalProperties: false,
};

/** The 402 body: the x402 v1 requirement (SPEC §2.1) plus the request id. */
export const paymentRequiredSchema: JsonSchema = jsonSchemaOf(
  paymentRequirementSchema.extend({
    message: z.string().optional(),
    requestId: z.string(),
  }),
);

/**
 * What the MCP transport answers a request it refuses (/mcp). The SDK's schema has no
 * `id: null`, which its own transport sends (JSON-RPC 2.0: the id could not be read).
 */
export const jsonRpcErrorSchema: JsonSchema = jsonSchemaOf(
  JSONRPCErrorResponseSchema.extend({ id: RequestIdSchema.nullable().optional() }),
);

export const paymentProofJsonSchema: JsonSchema = jsonSchemaOf(paymentProofSchema);
export const paymentReceiptJsonSchema: JsonSchema = jsonSchemaOf(paymentReceiptSchema);

/** The names under `#/components/schemas`. */
export const SCHEMA_NAMES = {
  error: 'Error',
  openAiError: 'OpenAiError',
  paymentRequired: 'PaymentRequired',
  paymentProof: 'PaymentProof',
  paymentReceipt: 'PaymentReceipt',
  jsonRpcError: 'JsonRpcError',
} as const;

export const componentSchemas: Record<string, JsonSchema> = {
  [SCHEMA_NAMES.error]: errorSchema,
  [SCHEMA_NAMES.openAiError]: openAiErrorSchema,
  [SCHEMA_NAMES.paymentRequired]: paymentRequiredSchema,
  [SCHEMA_NAMES.paymentProof]: paymentProofJsonSchema,
  [SCHEMA_NAMES.paymentReceipt]: paymentReceiptJsonSchema,
  [SCHEMA_NAMES.jsonRpcError]: jsonRpcErrorSchema,
};

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A header whose value is base64 of a JSON document. */
function base64Json(description: string, contentSchema?: JsonSchema) {
  return {
    description,
    schema: {
      type: 'string',
      contentEncoding: 'base64',
      contentMediaType: 'application/json',
      ...(contentSchema ? { contentSchema } : {}),
    },
  };
}

/** The payment request headers of a paid operation (docs/protocol.md). */
export const paymentRequestHeaders = [
  {
    in: 'header',
    name: 'X-PAYMENT',
    required: false,
    ...base64Json(
      'Tollgate x402 v1 payment proof for the `accepts` option paid (scheme exact_split). Send the same value again to replay a paid answer.',
      ref(SCHEMA_NAMES.paymentProof),
    ),
  },
  {
    in: 'header',
    name: 'PAYMENT-SIGNATURE',
    required: false,
    ...base64Json(
      'Stock x402 v2 PaymentPayload (scheme exact), where the 402 offered it in PAYMENT-REQUIRED (marketplace projects that opted in with x402Exact).',
    ),
  },
];

/** Headers of the 402. */
export const paymentRequiredHeaders = {
  'PAYMENT-REQUIRED': base64Json(
    'x402 v2 PaymentRequired, for stock x402 v2 clients; present when the route accepts v2 payments.',
  ),
};

/** Receipt headers of a paid answer. */
export const receiptHeaders = {
  'X-PAYMENT-RESPONSE': base64Json('Receipt of a v1 payment.', ref(SCHEMA_NAMES.paymentReceipt)),
  'PAYMENT-RESPONSE': base64Json('x402 v2 SettleResponse of a v2 payment.'),
};

export const securitySchemes = {
  walletSession: {
    type: 'http',
    scheme: 'bearer',
    description: 'A session token from wallet sign-in (POST /v1/auth/challenge, then /v1/auth/verify).',
  },
  operatorToken: {
    type: 'http',
    scheme: 'bearer',
    description: "The operator's TOLLGATE_ADMIN_TOKEN.",
  },
};
