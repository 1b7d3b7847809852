/**
 * MCP over Streamable HTTP (issue 15): `/mcp` serves the whole directory and the
 * inference tools, `/mcp/:slug` one project. Stateless (no session): each HTTP request
 * gets its own SDK server and web-standard transport, answered as JSON through Fastify
 * (so the access log, CORS and the request id apply as to any route).
 *
 * A tool call is served by the gateway's own paid route, in-process (`app.inject`),
 * with the payment from `_meta["x402/payment"]` in its header: the marketplace and
 * inference routes run settlement exactly as for an HTTP caller (mcp/call.ts). The
 * inner request carries the MCP caller's address, so the origin sees who called; it is
 * counted by the rate limit too (one tool call costs the caller two requests).
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import type { Invoke } from '../mcp/call.ts';
import { createMcpServer } from '../mcp/server.ts';
import { createTools, type ToolScope } from '../mcp/tools.ts';
import { isSlug } from '../providers/rules.ts';
import { sendError } from './error-handling.ts';
import { innerCallHeaders } from './inner-call.ts';

const VERSION = '0.1.0';

/** Request headers the transport reads; the rest (cookies, authorization) stay out of it. */
const PASSED = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

const mcpSchema = (summary: string, slug: boolean) => ({
  tags: ['mcp'],
  summary,
  description:
    'Model Context Protocol, Streamable HTTP transport (stateless, JSON responses). POST a JSON-RPC message ' +
    '(initialize, tools/list, tools/call); paid tool calls follow the x402 MCP transport (docs/mcp.md).',
  ...(slug
    ? {
        params: {
          type: 'object',
          properties: { slug: { type: 'string', description: 'A project slug.' } },
          required: ['slug'],
        },
      }
    : {}),
});

export function mcpRoutes(app: FastifyInstance, deps: Deps): void {
  const tools = createTools({
    projects: deps.store.projects,
    catalog: deps.catalog,
    config: deps.config,
    verifiers: deps.verifiers,
    models: deps.inference.catalogue,
    ...(deps.v2Schemes ? { v2Schemes: deps.v2Schemes } : {}),
  });

  const handle = async (request: FastifyRequest, reply: FastifyReply, scope: ToolScope) => {
    // Stateless with JSON answers: there is no server-sent stream to open. The transport
    // would open one for a GET that accepts it (and never end it); refused as the SDK's
    // stateless servers do. Every other refusal (Accept, content type) is the transport's.
    const accept = request.headers.accept ?? '';
    if (request.method === 'GET' && accept.includes('text/event-stream')) {
      return reply
        .code(405)
        .header('allow', 'POST')
        .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    }
    if (scope.slug !== undefined && !(isSlug(scope.slug) && (await deps.catalog.get(scope.slug)))) {
      return sendError(reply, 'not_found', `no project ${JSON.stringify(scope.slug.slice(0, 64))}`);
    }
    // The outer request took one rate-limit token: its first in-process call is covered by
    // it, every further one (a JSON-RPC batch of tool calls) takes its own.
    let covered = true;
    const invoke: Invoke = async (call) => {
      const inner = covered ? innerCallHeaders() : {};
      covered = false;
      const res = await app.inject({
        method: call.method as 'GET',
        url: call.url,
        headers: {
          ...call.headers,
          host: String(request.headers.host ?? ''),
          'user-agent': 'tollgate-mcp',
          'x-request-id': `${String(request.id).slice(0, 59)}.call`,
          ...inner,
        },
        remoteAddress: request.ip,
        ...(call.body ? { payload: call.body } : {}),
      });
      return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
    };
    const server = createMcpServer(
      {
        tools,
        invoke,
        version: VERSION,
        log: deps.log,
        ...(deps.v2Schemes ? { v2Schemes: deps.v2Schemes } : {}),
      },
      scope,
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      const headers = new Headers();
      for (const name of PASSED) {
        const v = request.headers[name];
        if (typeof v === 'string') headers.set(name, v);
      }
      const web = new Request(`http://mcp.invalid${request.url}`, { method: request.method, headers });
      const res = await transport.handleRequest(
        web,
        request.method === 'POST' ? { parsedBody: request.body } : {},
      );
      reply.code(res.status);
      res.headers.forEach((value, name) => {
        reply.header(name, value);
      });
      return reply.send(await res.text());
    } finally {
      await transport.close().catch(() => {});
      await server.close().catch(() => {});
    }
  };

  const methods = ['GET', 'POST', 'DELETE'] as ('GET' | 'POST' | 'DELETE')[];
  app.route({
    method: methods,
    url: '/mcp',
    schema: mcpSchema('MCP server: every directory endpoint and the inference routes as paid tools', false),
    handler: (request, reply) => handle(request, reply, {}),
  });
  app.route({
    method: methods,
    url: '/mcp/:slug',
    schema: mcpSchema("MCP server: one project's endpoints as paid tools", true),
    handler: (request, reply) => handle(request, reply, { slug: (request.params as { slug: string }).slug }),
  });
}
