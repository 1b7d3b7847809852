/**
 * JSON schemas of the earnings and payments routes (docs/provider-api.md): the query
 * strings they validate and the 200 bodies they serialize (and the OpenAPI document shows).
 * Query strings are coerced (strict-schema.ts), so `limit=20` is a number.
 */
import { PAYMENT_STATUSES } from '../payments/payment-status.ts';

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;

const time = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  description: 'ISO-8601 time or epoch milliseconds',
};
const range = {
  from: { ...time, description: 'Start, inclusive (ISO-8601 or epoch ms); default: 30 days before `to`' },
  to: { ...time, description: 'End, exclusive (ISO-8601 or epoch ms); default: now' },
};
const page = {
  limit: { type: 'integer', minimum: 1, maximum: PAGE_MAX, default: PAGE_DEFAULT },
  cursor: {
    type: 'string',
    minLength: 1,
    maxLength: 512,
    description: 'The `nextCursor` of the previous page of the same listing',
  },
};
const status = { type: 'string', enum: [...PAYMENT_STATUSES] };

export const earningsQuery = {
  type: 'object',
  properties: {
    ...range,
    groupBy: { type: 'string', enum: ['day', 'endpoint', 'chain'], default: 'day' },
  },
  additionalProperties: false,
};

export const projectPaymentsQuery = {
  type: 'object',
  properties: {
    ...range,
    ...page,
    status,
    format: { type: 'string', enum: ['json', 'csv'], description: 'csv: every page as one CSV download' },
  },
  additionalProperties: false,
};

export const operatorPaymentsQuery = {
  type: 'object',
  properties: { ...range, ...page, status },
  additionalProperties: false,
};

export const payerPaymentsQuery = {
  type: 'object',
  properties: { ...range, ...page },
  additionalProperties: false,
};

const nullableString = { type: ['string', 'null'] };
const amount = { type: 'string', description: 'Decimal USDC, exact (at most 6 decimals)' };
const chain = { type: 'string', enum: ['solana', 'sui'] };

const endpointRef = {
  type: ['object', 'null'],
  description: 'The endpoint paid for; null for inference or a deleted endpoint',
  properties: { id: { type: 'string' }, method: { type: 'string' }, path: { type: 'string' } },
  required: ['id', 'method', 'path'],
};

const figures = {
  chain,
  requests: { type: 'integer' },
  gross: amount,
  fee: amount,
  net: amount,
};

export const earningsResponse = {
  type: 'object',
  properties: {
    project: { type: 'string' },
    unit: { type: 'string', enum: ['USDC'] },
    from: { type: 'string' },
    to: { type: 'string' },
    groupBy: { type: 'string', enum: ['day', 'endpoint', 'chain'] },
    totals: {
      type: 'array',
      items: { type: 'object', properties: figures, required: Object.keys(figures) },
    },
    rows: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          key: { type: 'string', description: 'UTC day (YYYY-MM-DD), endpoint id or chain' },
          endpoint: endpointRef,
          ...figures,
        },
        required: ['key', ...Object.keys(figures)],
      },
    },
  },
  required: ['project', 'unit', 'from', 'to', 'groupBy', 'totals', 'rows'],
};

const paymentFields = {
  id: { type: 'string' },
  createdAt: { type: 'string' },
  deliveredAt: nullableString,
  endpoint: endpointRef,
  chain,
  network: { type: 'string' },
  txId: { type: 'string' },
  payer: { type: 'string' },
  gross: amount,
  fee: amount,
  net: amount,
  unit: { type: 'string', enum: ['USDC'] },
  status,
  replays: { type: 'integer' },
};

function listOf(item: object) {
  return {
    type: 'object',
    properties: { payments: { type: 'array', items: item }, nextCursor: nullableString },
    required: ['payments', 'nextCursor'],
  };
}

export const projectPaymentsResponse = listOf({
  type: 'object',
  properties: paymentFields,
  required: Object.keys(paymentFields),
});

export const operatorPaymentsResponse = listOf({
  type: 'object',
  properties: { ...paymentFields, project: nullableString },
  required: [...Object.keys(paymentFields), 'project'],
});

const { payer: _payer, net: _net, ...payerFields } = paymentFields;
const payerPayment = {
  ...payerFields,
  project: nullableString,
  route: { type: ['string', 'null'], enum: ['chat', 'embeddings', 'conversation', null] },
  receipt: {
    type: 'object',
    description:
      'The x402 receipt the answer carried: the X-PAYMENT-RESPONSE body (v1) or the PAYMENT-RESPONSE settle response (v2)',
    additionalProperties: true,
  },
};

export const payerPaymentsResponse = listOf({
  type: 'object',
  properties: payerPayment,
  required: Object.keys(payerPayment),
});
