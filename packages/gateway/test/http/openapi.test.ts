/**
 * GET /openapi.json: a valid OpenAPI 3.1 document that covers every route the app
 * registers, made from the schemas the routes validate with, and whose shared schemas
 * (the 402 body, the two error envelopes) describe what the routes really answer.
 */
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleDeps, buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { usesOpenAiErrors } from '../../src/errors.ts';
import { isWebPage, registeredRoutes } from '../../src/http/openapi.ts';
import { operationDoc } from '../../src/http/openapi-routes.ts';
import { jsonSchemaOf } from '../../src/http/openapi-schemas.ts';
import { chatRequestSchema } from '../../src/inference/chat-request.ts';
import { turnSchema } from '../../src/inference/conversations.ts';
import { embeddingsRequestSchema } from '../../src/inference/embeddings-request.ts';
import {
  endpointCreateBody,
  projectCreateBody,
  railParams,
  railPutBody,
} from '../../src/providers/schemas.ts';
import type { SandboxChains } from '../../src/sandbox-mode.ts';
import { openStore } from '../../src/store/open-store.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

const ADMIN_TOKEN = 'operator-token-0123456789abcdef';
const PUBLIC_BASE_URL = 'https://gateway.example.com';

type Operation = {
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; schema?: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }
  >;
};
type Document = {
  openapi: string;
  info: { title: string; version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

/** `/v1/projects/:slug` -> `/v1/projects/{slug}`; a wildcard is `{*}` (as @fastify/swagger writes it). */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*/g, '{*}');
}

/** An Ajv over the served document, to check real bodies against its component schemas. */
function bodyChecker(doc: Document) {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema({ $id: 'openapi.json', components: { schemas: doc.components.schemas } });
  return (name: string, body: unknown) => {
    const validate = ajv.getSchema(`openapi.json#/components/schemas/${name}`);
    if (!validate) throw new Error(`no schema ${name}`);
    const ok = validate(body);
    return ok ? 'valid' : ajv.errorsText(validate.errors);
  };
}

describe('the OpenAPI document', () => {
  let app: FastifyInstance;
  let doc: Document;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const config = loadConfig(
      {
        TOLLGATE_SECRET: 'x'.repeat(40),
        LOG_LEVEL: 'silent',
        DATABASE_URL: 'sqlite::memory:',
        TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
        PUBLIC_BASE_URL,
      },
      [],
    );
    const store = await openStore(config.databaseUrl);
    // Sandbox mode's routes too: their handlers (never called here) are all the chains are for.
    const deps = assembleDeps(config, store, {});
    app = await buildApp(deps, {
      logger: false,
      sandbox: {} as SandboxChains,
    });
    closers.push(async () => {
      await app.close();
      await deps.forwarder.close();
      await deps.inference.close();
      await store.close();
    });
    const res = await app.inject('/openapi.json');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.json();
  });
  afterAll(async () => {
    for (const c of closers.splice(0)) await c();
  });

  it('is a valid OpenAPI 3.1 document whose references all resolve', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(() => validator.resolveRefs()).not.toThrow();
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(doc.info).toMatchObject({ title: 'Tollgate', version: pkg.version });
    expect(doc.servers).toEqual([{ url: PUBLIC_BASE_URL }]);
  });

  it('documents every route the app registers, with a summary and a tag', () => {
    const routes = registeredRoutes(app);
    const gets = new Set(routes.filter((r) => r.method === 'GET').map((r) => r.url));
    // Left out: Fastify's automatic HEAD of a GET route (the GET documents it), and hidden web pages.
    const documented = routes.filter((r) => !(r.method === 'HEAD' && gets.has(r.url)));
    const hidden = documented.filter((r) => r.hidden);
    expect(hidden.filter((r) => !isWebPage(r.url)).map((r) => `${r.method} ${r.url}`)).toEqual([]);
    const missing: string[] = [];
    const undocumented: string[] = [];
    for (const r of documented.filter((x) => !x.hidden)) {
      const op = doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase()];
      if (!op) missing.push(`${r.method} ${r.url}`);
      else if (!operationDoc(r.method, openApiPath(r.url)) || !op.summary || op.tags?.length !== 1)
        undocumented.push(`${r.method} ${r.url}`);
    }
    expect(missing).toEqual([]);
    expect(undocumented, 'add these routes to src/http/openapi-routes.ts').toEqual([]);
    // Nothing is documented that is not served (a stale entry, a route renamed).
    const served = new Set(routes.map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`));
    const extra = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .map((m) => `${m} ${path}`)
        .filter((k) => !served.has(k)),
    );
    expect(extra).toEqual([]);
    expect(routes.length).toBeGreaterThan(50);
  });

  it('leaves the HTML pages out and serves the reference itself at /docs', () => {
    expect(doc.paths['/docs']).toBeUndefined();
    expect(registeredRoutes(app).some((r) => r.url === '/docs' && r.hidden)).toBe(true);
    expect(doc.paths['/openapi.json']?.get?.summary).toBeTruthy();
  });

  it('gives paid operations the 402 body, the payment headers and the receipts', () => {
    const paid = [
      ['/p/{projectSlug}/{*}', 'get'],
      ['/p/{projectSlug}/{*}', 'post'],
      ['/p/{projectSlug}', 'get'],
      ['/v1/chat/completions', 'post'],
      ['/v1/embeddings', 'post'],
      ['/v1/conversations/{id}/messages', 'post'],
    ] as const;
    for (const [path, method] of paid) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      const r402 = op!.responses['402']!;
      expect(r402.content?.['application/json']?.schema).toEqual({
        anyOf: [{ $ref: '#/components/schemas/PaymentRequired' }, { $ref: '#/components/schemas/Error' }],
      });
      expect(Object.keys(r402.headers ?? {})).toEqual(['PAYMENT-REQUIRED']);
      expect(Object.keys(op!.responses['200']?.headers ?? {})).toEqual([
        'X-PAYMENT-RESPONSE',
        'PAYMENT-RESPONSE',
      ]);
      const headers = (op!.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
      expect(headers).toEqual(['X-PAYMENT', 'PAYMENT-SIGNATURE']);
    }
    // A free route has none of it.
    expect(doc.paths['/v1/models']?.get?.responses['402']).toBeUndefined();
  });

  it('gives every operation the error envelope its URL answers with', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      const envelope = { $ref: `#/components/schemas/${usesOpenAiErrors(path) ? 'OpenAiError' : 'Error'}` };
      for (const [method, op] of Object.entries(item)) {
        // The MCP transport refuses in JSON-RPC; Fastify (an unreadable body) in the envelope.
        const want = path.startsWith('/mcp')
          ? { anyOf: [{ $ref: '#/components/schemas/JsonRpcError' }, envelope] }
          : envelope;
        for (const status of ['4XX', '5XX']) {
          expect(
            op.responses[status]?.content?.['application/json']?.schema,
            `${method} ${path} ${status}`,
          ).toEqual(want);
        }
      }
    }
    expect(doc.paths['/v1/chat/completions']?.post?.responses['4XX']?.content).toMatchObject({
      'application/json': { schema: { $ref: '#/components/schemas/OpenAiError' } },
    });
    expect(doc.paths['/v1/projects']?.post?.responses['4XX']?.content).toMatchObject({
      'application/json': { schema: { $ref: '#/components/schemas/Error' } },
    });
  });

  it('says who may call what', () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['operatorToken', 'walletSession']);
    const both = [{ walletSession: [] }, { operatorToken: [] }];
    expect(doc.paths['/v1/projects']?.post?.security).toEqual(both);
    expect(doc.paths['/v1/projects/{slug}/rails/{chain}']?.put?.security).toEqual(both);
    expect(doc.paths['/metrics']?.get?.security).toEqual([{ operatorToken: [] }]);
    expect(doc.paths['/v1/projects/{slug}/earnings']?.get?.security).toEqual(both);
    expect(doc.paths['/v1/conversations']?.get?.security).toEqual([{ walletSession: [] }]);
    expect(doc.paths['/v1/me/payments']?.get?.security).toEqual([{ walletSession: [] }]);
    expect(doc.paths['/v1/payments']?.get?.security).toEqual([{ operatorToken: [] }]);
    expect(doc.paths['/v1/directory/apis']?.get?.security).toBeUndefined();
    expect(doc.paths['/p/{projectSlug}/{*}']?.get?.security).toBeUndefined();
  });

  it('describes bodies and parameters with the very schemas the routes validate with', () => {
    const body = (path: string, method: string) =>
      doc.paths[path]?.[method]?.requestBody?.content['application/json']?.schema;
    // Fastify JSON schemas, read by @fastify/swagger.
    expect(body('/v1/projects', 'post')).toEqual(projectCreateBody);
    expect(body('/v1/projects/{slug}/endpoints', 'post')).toEqual(endpointCreateBody);
    expect(body('/v1/projects/{slug}/rails/{chain}', 'put')).toEqual(railPutBody);
    const params = doc.paths['/v1/projects/{slug}/rails/{chain}']?.put?.parameters ?? [];
    const railSchema = railParams as { properties: Record<string, unknown> };
    expect(params.filter((p) => p.in === 'path').map((p) => [p.name, p.schema])).toEqual(
      Object.entries(railSchema.properties),
    );
    // zod schemas of the bodies validated in code.
    expect(body('/v1/chat/completions', 'post')).toEqual(jsonSchemaOf(chatRequestSchema));
    expect(body('/v1/embeddings', 'post')).toEqual(jsonSchemaOf(embeddingsRequestSchema));
    expect(body('/v1/conversations/{id}/messages', 'post')).toEqual(jsonSchemaOf(turnSchema));
    // The directory's query, as validated.
    const query = (doc.paths['/v1/directory/apis']?.get?.parameters ?? []).filter((p) => p.in === 'query');
    expect(query.map((p) => p.name).sort()).toEqual(['category', 'cursor', 'limit', 'q']);
  });

  it('describes the error bodies the routes really answer, unchanged by the documentation', async () => {
    const check = bodyChecker(doc);
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    // A Fastify-validated body: the flat envelope, the message Fastify's validator gives.
    const strict = await app.inject({
      method: 'POST',
      url: '/v1/projects',
      headers: auth,
      payload: { slug: 'abc', name: 'x', colour: 'red' },
    });
    expect(strict.statusCode).toBe(400);
    expect(strict.json()).toEqual({
      error: 'invalid_request',
      message: 'body colour: must NOT have additional properties',
      requestId: expect.any(String),
    });
    expect(check('Error', strict.json())).toBe('valid');
    const anonymous = await app.inject({ method: 'GET', url: '/v1/projects' });
    expect(anonymous.statusCode).toBe(401);
    expect(check('Error', anonymous.json())).toBe('valid');
    // A zod-validated body on an OpenAI-style route: OpenAI's envelope, param named.
    const chat = await app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      payload: { model: 'm', messages: [{ role: 'user', content: 'hi' }], functions: [] },
    });
    expect(chat.statusCode).toBe(400);
    expect(chat.json()).toEqual({
      error: {
        message: 'unsupported parameter: functions; use `tools`',
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'functions',
      },
      requestId: expect.any(String),
    });
    expect(check('OpenAiError', chat.json())).toBe('valid');
    const embeddings = await app.inject({
      method: 'POST',
      url: '/v1/embeddings',
      headers: { 'content-type': 'application/json' },
      payload: { model: 'm', input: [] },
    });
    expect(embeddings.statusCode).toBe(400);
    expect(embeddings.json().error).toMatchObject({ code: 'invalid_request', param: 'input' });
    expect(check('OpenAiError', embeddings.json())).toBe('valid');
    // The MCP transport's refusal, and Fastify's for a body it cannot parse, on the same route.
    const mcp = await app.inject({ method: 'GET', url: '/mcp' });
    expect(mcp.statusCode >= 400 && mcp.statusCode < 500).toBe(true);
    expect(mcp.json()).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    expect(check('JsonRpcError', mcp.json())).toBe('valid');
    const mcpJson = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect(mcpJson.statusCode).toBe(400);
    expect(check('Error', mcpJson.json())).toBe('valid');
    // The schemas are not so loose that the other envelope passes.
    expect(check('Error', chat.json())).not.toBe('valid');
    expect(check('OpenAiError', strict.json())).not.toBe('valid');
  });
});

describe('the 402 of a paid route', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('is the PaymentRequired schema of the document', async () => {
    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as Document;
    const check = bodyChecker(doc);
    const res = await fetch(`${h.baseUrl}/p/${h.project.slug}/items`);
    expect(res.status).toBe(402);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: 'payment_required', x402Version: 1, requestId: expect.any(String) });
    expect(check('PaymentRequired', body)).toBe('valid');
    expect(check('Error', body)).not.toBe('valid');
    // The same schema refuses a body that lost a required field.
    const { nonce: _nonce, ...withoutNonce } = body;
    expect(check('PaymentRequired', withoutNonce)).not.toBe('valid');
  });
});
