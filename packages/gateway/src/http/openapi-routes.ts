/**
 * What the OpenAPI document says about each operation beyond what Fastify's route
 * schemas already tell @fastify/swagger: a summary, the tag, who may call it, whether it
 * is paid, and, for the routes that validate their body in code with zod instead of a
 * Fastify schema, that very zod schema (rendered by openapi-schemas.ts `jsonSchemaOf`).
 * A route may carry its own `summary` and `description` in its schema (Fastify ignores
 * them); the tag is always the group's, so the reference has one section per group.
 * Keys are `METHOD /path` in OpenAPI form (`{param}`, a wildcard is `{*}`); `*` as the
 * method stands for every method of a multi-method route. The OpenAPI test fails when a
 * registered route has no entry here, so a new route cannot go undocumented.
 */
import type { z } from 'zod';
import { chatRequestSchema } from '../inference/chat-request.ts';
import {
  addItemsSchema,
  createConversationSchema,
  turnSchema,
  updateConversationSchema,
} from '../inference/conversations.ts';
import { embeddingsRequestSchema } from '../inference/embeddings-request.ts';

/** Security requirement names from openapi-schemas.ts `securitySchemes`. */
export type Auth = 'session' | 'operator' | 'sessionOrOperator' | 'none';

export interface OperationDoc {
  /** Required here unless the route's own `schema.summary` has one (the route's wins). */
  summary?: string;
  description?: string;
  /** The zod schema the handler validates its JSON body with (routes without a Fastify body schema). */
  body?: z.ZodType;
  /** The handler reads a missing body as `{}`. */
  optionalBody?: true;
  /** Answered with a 402 and paid with X-PAYMENT / PAYMENT-SIGNATURE. */
  paid?: boolean;
  /** The success status when it is not 200, and its meaning. */
  ok?: { status: 201 | 204; description: string };
  /** Overrides the group's. */
  auth?: Auth;
  /** Refusals in JSON-RPC (the MCP transport's) as well as Tollgate's body. */
  jsonRpcErrors?: true;
}

interface Group {
  tag: string;
  description: string;
  auth: Auth;
  operations: Record<string, OperationDoc>;
}

const created = (what: string) => ({ status: 201, description: `${what} created.` }) as const;
const deleted = { status: 204, description: 'Deleted.' } as const;

const GROUPS: Group[] = [
  {
    tag: 'Marketplace',
    description: 'Paid calls to providers’ APIs (docs/protocol.md).',
    auth: 'none',
    operations: {
      '* /p/{projectSlug}': {
        summary: 'Call a project’s root endpoint (paid)',
        description:
          'Any method. Without a payment header: the 402 with the price per chain. With one: forwarded to the origin once paid; its answer is passed through (status, headers, body), with the receipt header.',
        paid: true,
      },
      '* /p/{projectSlug}/{*}': {
        summary: 'Call a project endpoint (paid)',
        description:
          '`*` is the endpoint path (and query). Any method. Without a payment header: the 402 with the price per chain. With one: forwarded to the origin once paid; its answer is passed through, with the receipt header.',
        paid: true,
      },
    },
  },
  {
    tag: 'Inference',
    description: 'OpenAI-compatible inference, paid per request (docs/inference.md).',
    auth: 'none',
    operations: {
      'GET /v1/models': { summary: 'List the models' },
      'GET /v1/models/{*}': { summary: 'Get one model (the id may contain slashes)' },
      'GET /v1/pricing': { summary: 'Prices per model and chain' },
      'POST /v1/chat/completions': {
        summary: 'Chat completion (paid)',
        description:
          'Priced from the prompt and the completion cap; `stream: true` answers server-sent events.',
        body: chatRequestSchema,
        paid: true,
      },
      'POST /v1/embeddings': {
        summary: 'Embeddings (paid)',
        body: embeddingsRequestSchema,
        paid: true,
      },
    },
  },
  {
    tag: 'Conversations',
    description: 'Stored conversations of a signed-in wallet (docs/inference.md).',
    auth: 'session',
    operations: {
      'POST /v1/conversations': {
        summary: 'Create a conversation',
        body: createConversationSchema,
        optionalBody: true,
      },
      'GET /v1/conversations': {
        summary: 'List my conversations, newest first',
        description: 'Query: `limit` (1..100, default 20), `after` (the last id seen).',
      },
      'GET /v1/conversations/{id}': { summary: 'Get a conversation' },
      'PATCH /v1/conversations/{id}': {
        summary: 'Update a conversation',
        body: updateConversationSchema,
        optionalBody: true,
      },
      'POST /v1/conversations/{id}': {
        summary: 'Update a conversation (as OpenAI’s SDK does)',
        body: updateConversationSchema,
        optionalBody: true,
      },
      'DELETE /v1/conversations/{id}': { summary: 'Delete a conversation' },
      'GET /v1/conversations/{id}/items': {
        summary: 'List a conversation’s items',
        description:
          'Query: `limit` (1..100, default 20), `order` (`asc`, the default, or `desc`), `after` (the seq or id of the last item seen).',
      },
      'POST /v1/conversations/{id}/items': { summary: 'Append items', body: addItemsSchema },
      'GET /v1/conversations/{id}/items/{itemId}': { summary: 'Get one item' },
      'POST /v1/conversations/{id}/messages': {
        summary: 'Paid chat turn in a conversation',
        description: 'Priced over the whole stored context plus the new messages.',
        body: turnSchema,
        paid: true,
      },
    },
  },
  {
    tag: 'Sign-in',
    description: 'Wallet sign-in (Sign-In-With-Solana / CAIP-122; docs/provider-api.md).',
    auth: 'none',
    operations: {
      'POST /v1/auth/challenge': { summary: 'Get a message to sign' },
      'POST /v1/auth/verify': { summary: 'Exchange the signed message for a session token' },
      'POST /v1/auth/logout': {
        summary: 'Revoke this session token',
        auth: 'session',
        ok: { status: 204, description: 'Revoked.' },
      },
      'GET /v1/auth/session': { summary: 'Who the bearer token belongs to', auth: 'sessionOrOperator' },
    },
  },
  {
    tag: 'Provider',
    description: 'Projects, APIs, endpoints and payment rails (docs/provider-api.md).',
    auth: 'sessionOrOperator',
    operations: {
      'POST /v1/projects': { summary: 'Create a project', ok: created('Project') },
      'GET /v1/projects': { summary: 'List my projects (all, for the operator)' },
      'GET /v1/projects/{slug}': { summary: 'Get a project' },
      'PATCH /v1/projects/{slug}': { summary: 'Update a project' },
      'DELETE /v1/projects/{slug}': { summary: 'Delete a project', ok: deleted },
      'POST /v1/projects/{slug}/apis': { summary: 'Register an API (origin)', ok: created('API') },
      'GET /v1/projects/{slug}/apis': { summary: 'List the project’s APIs' },
      'GET /v1/projects/{slug}/apis/{apiId}': { summary: 'Get an API' },
      'PATCH /v1/projects/{slug}/apis/{apiId}': { summary: 'Update an API' },
      'DELETE /v1/projects/{slug}/apis/{apiId}': { summary: 'Delete an API', ok: deleted },
      'POST /v1/projects/{slug}/endpoints': { summary: 'Create a priced endpoint', ok: created('Endpoint') },
      'GET /v1/projects/{slug}/endpoints': { summary: 'List the project’s endpoints' },
      'GET /v1/projects/{slug}/endpoints/{endpointId}': { summary: 'Get an endpoint' },
      'PATCH /v1/projects/{slug}/endpoints/{endpointId}': { summary: 'Update an endpoint' },
      'DELETE /v1/projects/{slug}/endpoints/{endpointId}': { summary: 'Delete an endpoint', ok: deleted },
      'PUT /v1/projects/{slug}/rails/{chain}': { summary: 'Set the payment rail of a chain' },
      'GET /v1/projects/{slug}/rails': { summary: 'List the project’s payment rails' },
      'DELETE /v1/projects/{slug}/rails/{chain}': { summary: 'Remove a payment rail', ok: deleted },
      // Summaries in providers/earnings-routes.ts.
      'GET /v1/projects/{slug}/earnings': {},
      'GET /v1/projects/{slug}/payments': {},
    },
  },
  {
    tag: 'Payments',
    description: 'Payment history: a payer’s own, and every payment for the operator.',
    auth: 'session',
    operations: {
      // Summaries in me-routes.ts and operator-payment-routes.ts.
      'GET /v1/me/payments': {},
      'GET /v1/payments': { auth: 'operator' },
    },
  },
  {
    tag: 'MCP',
    description: 'Model Context Protocol server: the directory’s endpoints and inference as paid tools.',
    auth: 'none',
    operations: {
      // Summaries and descriptions in mcp.ts.
      '* /mcp': { jsonRpcErrors: true },
      '* /mcp/{slug}': { jsonRpcErrors: true },
    },
  },
  {
    tag: 'Directory',
    description: 'The public directory of listed APIs.',
    auth: 'none',
    operations: {
      'GET /v1/directory/apis': { summary: 'Search listed APIs (cursor pages)' },
      'GET /v1/directory/apis/{slug}': { summary: 'A listed API with its endpoints and prices' },
      'GET /v1/directory/categories': { summary: 'Categories with their number of APIs' },
    },
  },
  {
    tag: 'Discovery',
    description: 'What x402 clients and agents can pay for (docs/discovery.md).',
    auth: 'none',
    operations: {
      'GET /discovery/resources': { summary: 'Payable resources in the x402 bazaar shape' },
      'GET /.well-known/x402': { summary: 'Manifest for agents' },
    },
  },
  {
    tag: 'Operations',
    description: 'Health and metrics (docs/operations.md).',
    auth: 'none',
    operations: {
      'GET /healthz': { summary: 'Liveness' },
      'GET /readyz': { summary: 'Readiness: the database and chain nodes' },
      'GET /metrics': { summary: 'Prometheus metrics', auth: 'operator' },
      'GET /openapi.json': { summary: 'This OpenAPI document' },
    },
  },
  {
    tag: 'Sandbox',
    description: 'Sandbox mode only: the local chains, a faucet and balances.',
    auth: 'none',
    operations: {
      'GET /sandbox/info': { summary: 'Where the local chains are' },
      'POST /sandbox/faucet': { summary: 'Fund a wallet with test USDC (and SOL)' },
      'GET /sandbox/balances': { summary: 'A wallet’s test USDC balance' },
    },
  },
];

export interface ResolvedOperation extends OperationDoc {
  tag: string;
  auth: Auth;
}

const byKey = new Map<string, ResolvedOperation>();
for (const g of GROUPS) {
  for (const [key, doc] of Object.entries(g.operations)) {
    byKey.set(key, { ...doc, tag: g.tag, auth: doc.auth ?? g.auth });
  }
}

/** The documentation of one operation, or undefined when the route has no entry. */
export function operationDoc(method: string, openApiPath: string): ResolvedOperation | undefined {
  return byKey.get(`${method.toUpperCase()} ${openApiPath}`) ?? byKey.get(`* ${openApiPath}`);
}

/** The tags in the order the reference shows them. */
export const TAGS = GROUPS.map((g) => ({ name: g.tag, description: g.description }));
