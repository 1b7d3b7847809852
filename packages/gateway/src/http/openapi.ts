/**
 * `GET /openapi.json` (OpenAPI 3.1) and `GET /docs` (Swagger UI, its assets served from
 * node_modules: no CDN). @fastify/swagger builds the document from the routes Fastify
 * registers and the JSON schemas they validate with; this file adds what those schemas
 * cannot say (openapi-routes.ts: summaries, tags, security, paid operations, and the zod
 * schemas of the bodies validated in code) and the shared schemas of openapi-schemas.ts
 * (the 402 body, the payment headers, the two error envelopes). Nothing here changes a
 * route's validation: the extra documentation is added to the document, never to the
 * routes' `schema`, which Fastify would compile.
 *
 * registerOpenApi must run before any route is added: @fastify/swagger and the route
 * list below learn routes from the `onRoute` hook. openApiRoutes adds the two routes.
 */
import { readFileSync } from 'node:fs';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.ts';
import { usesOpenAiErrors } from '../errors.ts';
import { type Auth, operationDoc, TAGS } from './openapi-routes.ts';
import {
  componentSchemas,
  jsonSchemaOf,
  paymentRequestHeaders,
  paymentRequiredHeaders,
  receiptHeaders,
  ref,
  SCHEMA_NAMES,
  securitySchemes,
} from './openapi-schemas.ts';

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PREFIX = '/docs';

/** A route as Fastify registered it (one entry per method). */
export interface RegisteredRoute {
  method: string;
  url: string;
  /** `schema.hide`: left out of the document on purpose (web pages, the reference's own assets). */
  hidden: boolean;
}

/**
 * Routes left out of the document on purpose, with `schema.hide`: the HTML pages and
 * their assets (the directory, the console, this reference). Any other hidden route is
 * a documentation gap, which the OpenAPI test reports.
 */
const WEB_PAGE_PREFIXES = ['/directory', '/console', '/assets', DOCS_PREFIX];

export function isWebPage(url: string): boolean {
  return url === '/' || WEB_PAGE_PREFIXES.some((p) => url === p || url.startsWith(`${p}/`));
}

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route the app registered since registerOpenApi, for the coverage test. */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return registered.get(app) ?? [];
}

/**
 * Swagger UI makes no request elsewhere (validatorUrl is null by default): scripts,
 * styles and the document come from this origin. Swagger UI sets inline style
 * attributes, hence 'unsafe-inline' for styles only.
 */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY: Record<Auth, Record<string, string[]>[] | undefined> = {
  none: undefined,
  session: [{ walletSession: [] }],
  operator: [{ operatorToken: [] }],
  sessionOrOperator: [{ walletSession: [] }, { operatorToken: [] }],
};

/** Wildcards get the name `*` from @fastify/swagger; say what they hold. */
const PATH_PARAMETERS: Record<string, string> = {
  '*': 'The rest of the path: the endpoint path (with its query) under /p, the model id under /v1/models.',
  projectSlug: 'The project’s slug.',
};

const OPERATION_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function gatewayVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return String(pkg.version);
}

type Operation = Record<string, unknown> & {
  responses?: Record<string, Record<string, unknown>>;
  parameters?: unknown[];
};

/** The error body a path answers in: the renderer picks the envelope with the same function. */
function errorResponse(path: string, description: string, jsonRpc: boolean) {
  const envelope = ref(usesOpenAiErrors(path) ? SCHEMA_NAMES.openAiError : SCHEMA_NAMES.error);
  const schema = jsonRpc ? { anyOf: [ref(SCHEMA_NAMES.jsonRpcError), envelope] } : envelope;
  return { description, content: { 'application/json': { schema } } };
}

/** Adds one operation's documentation to what @fastify/swagger generated from its route. */
function enrich(method: string, path: string, op: Operation): void {
  const doc = operationDoc(method, path);
  if (!doc) return; // reported by the OpenAPI test: every route needs an entry
  // The route's own summary and description (in its schema) win over the table's.
  if (doc.summary) op.summary ??= doc.summary;
  if (doc.description) op.description ??= doc.description;
  op.tags = [doc.tag];
  const security = SECURITY[doc.auth];
  if (security) op.security = security;
  // A route validates its body with a Fastify schema (already in requestBody) or in code with zod.
  if (doc.body && !op.requestBody) {
    op.requestBody = {
      required: !doc.optionalBody,
      content: { 'application/json': { schema: jsonSchemaOf(doc.body) } },
    };
  }
  const responses: Record<string, Record<string, unknown>> = { ...op.responses };
  const generated = responses['200'];
  if (generated?.description === 'Default Response') {
    delete responses['200'];
    if (doc.ok) responses[String(doc.ok.status)] = { description: doc.ok.description };
    else responses['200'] = { ...generated, description: 'Success.' };
  }
  for (const p of (op.parameters ?? []) as { in?: string; name?: string; description?: string }[]) {
    if (p.in === 'path' && PATH_PARAMETERS[p.name ?? '']) p.description ??= PATH_PARAMETERS[p.name ?? ''];
  }
  if (doc.paid) {
    op.parameters = [...(op.parameters ?? []), ...paymentRequestHeaders];
    responses['200'] = {
      ...responses['200'],
      description: 'Paid and answered; the receipt is in the response headers.',
      headers: receiptHeaders,
    };
    responses['402'] = {
      description:
        'Payment required: the price and how to pay it (the x402 requirement). A payment that could not be settled is answered 402 in the error body.',
      headers: paymentRequiredHeaders,
      content: {
        'application/json': {
          schema: { anyOf: [ref(SCHEMA_NAMES.paymentRequired), ref(SCHEMA_NAMES.error)] },
        },
      },
    };
  }
  const jsonRpc = doc.jsonRpcErrors === true;
  responses['4XX'] = errorResponse(path, 'Refused: the code says why (docs/errors.md).', jsonRpc);
  responses['5XX'] = errorResponse(
    path,
    'Failed on our side or upstream; `retryable` says whether to retry.',
    jsonRpc,
  );
  op.responses = responses;
}

function finishDocument({ openapiObject }: { openapiObject: Record<string, unknown> }) {
  const paths = openapiObject.paths as Record<string, Record<string, Operation>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!OPERATION_METHODS.has(method)) continue;
      // The methods of a multi-method route (/p) share one generated object.
      item[method] = structuredClone(op);
      enrich(method, path, item[method]);
    }
  }
  return openapiObject;
}

/** The document generator and the route list; before any route. */
export async function registerOpenApi(app: FastifyInstance, deps: Deps): Promise<void> {
  const routes: RegisteredRoute[] = [];
  registered.set(app, routes);
  app.addHook('onRoute', (route) => {
    const hidden = (route.schema as { hide?: boolean } | undefined)?.hide === true;
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, hidden });
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tollgate',
        version: gatewayVersion(),
        description:
          'A paid API gateway: x402 payments in USDC on Sui and Solana. Errors: docs/errors.md; the payment protocol: docs/protocol.md.',
      },
      servers: [{ url: deps.config.publicBaseUrl }],
      tags: TAGS,
      components: { schemas: componentSchemas, securitySchemes } as never,
    },
    // OpenAPI 3.1 speaks JSON Schema 2020-12: keep `const` as the validators have it.
    convertConstToEnum: false,
    transformObject: finishDocument as never,
  });
}

/**
 * `GET /openapi.json` and `/docs`. Registered with the other routes, after the app's
 * hooks and error handler, which a route registered earlier would not get.
 */
export function openApiRoutes(app: FastifyInstance): void {
  app.get(OPENAPI_PATH, async (_request, reply) => {
    reply.header('cache-control', 'no-cache');
    return app.swagger();
  });

  app.register(fastifySwaggerUi, {
    routePrefix: DOCS_PREFIX,
    // "Try it out" calls the gateway that serves the page (the CSP allows no other origin):
    // the server is relative to /docs/json, whatever host name the browser used.
    transformSpecification: (spec: Record<string, unknown>) => ({
      ...spec,
      servers: [{ url: '..', description: 'This gateway' }],
    }),
    staticCSP: DOCS_CSP,
    theme: { title: 'Tollgate API reference' },
    uiConfig: { deepLinking: true, defaultModelsExpandDepth: 0 },
  });
}
