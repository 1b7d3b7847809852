/**
 * The MCP server (official SDK, low-level `Server`): `tools/list` pages through the
 * tools of a scope, `tools/call` validates the arguments and serves the call as a paid
 * request (call.ts). Stateless: http/mcp.ts makes one per HTTP request.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { V2Schemes } from '../payments/v2-offer.ts';
import { callTool, errorResult, type Invoke } from './call.ts';
import type { Json, ToolScope, Tools } from './tools.ts';

export interface McpServerDeps {
  tools: Tools;
  invoke: Invoke;
  v2Schemes?: V2Schemes;
  version: string;
  log: { error(obj: unknown, msg: string): void };
}

const isPlainObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

export function createMcpServer(d: McpServerDeps, scope: ToolScope): Server {
  const server = new Server(
    { name: scope.slug ? `tollgate-${scope.slug}` : 'tollgate', version: d.version },
    {
      capabilities: { tools: { listChanged: false } },
      instructions:
        'Paid tools (x402): a call without payment returns isError with an x402 v2 PaymentRequired; ' +
        'pay one of its accepts and call again with the payment in _meta["x402/payment"]. ' +
        'The receipt comes back in _meta["x402/payment-response"].',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const page = await d.tools.list(scope, request.params?.cursor);
    return {
      tools: page.tools.map((t) => ({
        name: t.name,
        ...(t.title ? { title: t.title } : {}),
        description: t.description,
        inputSchema: t.inputSchema as { type: 'object' },
        _meta: t._meta,
      })),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: given, _meta } = request.params;
    const tool = await d.tools.resolve(scope, name);
    if (!tool)
      throw new McpError(ErrorCode.InvalidParams, `no tool named ${JSON.stringify(name.slice(0, 128))}`);
    const args = given ?? {};
    if (!isPlainObject(args)) return errorResult('invalid_request', 'the arguments must be an object');
    try {
      return await callTool(
        { invoke: d.invoke, ...(d.v2Schemes ? { v2Schemes: d.v2Schemes } : {}) },
        tool,
        args,
        _meta,
      );
    } catch (err) {
      // The route answers every outcome itself; reaching here is the gateway's fault, never the payer's.
      d.log.error({ err, tool: name }, 'MCP tool call failed');
      return errorResult(
        'service_unavailable',
        'the gateway could not serve this call; retry with the same payment',
        {
          retryable: true,
        },
      );
    }
  });
  return server;
}
