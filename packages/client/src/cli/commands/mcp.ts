/**
 * MCP commands: `mcp tools` lists a gateway's MCP tools with their prices, `mcp call`
 * calls one, paying it with your wallet under the same limits as `tollgate pay`. The MCP
 * SDK is loaded only when one of them runs.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentProof } from '@tollgate/protocol';
import { type McpPayEvent, payingMcpClient, type ToolResult, UndeliveredToolCallError } from '../../mcp.ts';
import { DEFAULT_MAX_PER_REQUEST } from '../../spend.ts';
import { payerGateway } from '../chain-options.ts';
import {
  type CliCommand,
  CliError,
  type CliIo,
  optionalString,
  type ParsedValues,
  UsageError,
  wantsJson,
} from '../command.ts';
import { configDir } from '../credentials.ts';
import { walletFrom } from './payer.ts';

/** `--project <slug>`: that project's server (/mcp/<slug>); else the whole directory (/mcp). */
function serverUrl(values: ParsedValues, io: CliIo): string {
  const project = optionalString(values, 'project');
  return `${payerGateway(values, io.env)}/mcp${project ? `/${encodeURIComponent(project)}` : ''}`;
}

async function connect(url: string): Promise<Client> {
  let sdk: [
    typeof import('@modelcontextprotocol/sdk/client/index.js'),
    typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ];
  try {
    sdk = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
  } catch {
    throw new CliError('`tollgate mcp` needs the MCP SDK: npm install @modelcontextprotocol/sdk');
  }
  const [{ Client }, { StreamableHTTPClientTransport }] = sdk;
  const client = new Client({ name: 'tollgate-cli', version: '0.1.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  } catch (e) {
    throw new CliError(`cannot reach the MCP server at ${url}: ${(e as Error).message}`);
  }
  return client;
}

const tools: CliCommand = {
  name: 'mcp tools',
  summary: "list the gateway's MCP tools (every directory endpoint, chat, embeddings) with their prices",
  usage: '[--project <slug>] [--gateway <url>]',
  details: 'One line per tool: name, then price. --json prints the tools as the server lists them.',
  options: { project: { type: 'string' } },
  async run(io, values) {
    const client = await connect(serverUrl(values, io));
    try {
      const mcp = payingMcpClient(client, { wallets: [] });
      const list = await mcp.listTools();
      if (wantsJson(values)) return list;
      for (const t of list) {
        const price = t._meta?.['tollgate/price'] as { total?: string } | undefined;
        io.out(`${t.name}  ${price?.total ? `${price.total} USDC` : 'priced per call'}`);
      }
      return undefined;
    } finally {
      await client.close().catch(() => {});
    }
  },
};

function parseArgs(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--args is not JSON: ${(e as Error).message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new UsageError('--args must be a JSON object');
  return v as Record<string, unknown>;
}

interface SavedToolCall {
  tollgateSavedToolCall: 1;
  savedAt: string;
  note: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  payment: PaymentProof;
}

/** Keeps a paid, undelivered call on disk (mode 0600, never overwritten) for `--payment-file`. */
function keep(io: CliIo, values: ParsedValues, server: string, e: UndeliveredToolCallError): string {
  const at = new Date().toISOString().replaceAll(':', '').replace(/\..*/, '');
  const path =
    optionalString(values, 'proof-file') ??
    join(configDir(io.env), 'payments', `mcp-${at}-${e.payment.txHashOrDigest.slice(0, 12)}.json`);
  const saved: SavedToolCall = {
    tollgateSavedToolCall: 1,
    savedAt: new Date().toISOString(),
    note: e.message,
    server,
    tool: e.tool,
    args: e.args,
    payment: e.payment,
  };
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, `${JSON.stringify(saved, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
    chmodSync(path, 0o600);
  } catch (err) {
    io.err(`cannot write ${path} (${(err as Error).message}); payment: ${JSON.stringify(e.payment)}`);
    throw new CliError(e.message);
  }
  return path;
}

function progress(io: CliIo) {
  return (e: McpPayEvent) => {
    if (e.type === 'challenge')
      io.err(
        `payment required: ${e.requirement.description} — ${e.requirement.accepts.map((a) => `${a.totalAmount} USDC on ${a.chain}`).join(' or ')}`,
      );
    if (e.type === 'requote') io.err(`the quote expires at ${e.expiresAt}, too soon: asking for a fresh one`);
    if (e.type === 'paid')
      io.err(`paid ${e.option.totalAmount} USDC on ${e.option.chain}: ${e.txHashOrDigest}`);
    if (e.type === 'retry') io.err(`retry ${e.attempt} (${e.reason}) in ${e.delayMs} ms, same payment`);
  };
}

function printResult(io: CliIo, values: ParsedValues, result: ToolResult): void {
  const receipt = result._meta?.['x402/payment-response'];
  if (receipt) io.err(`receipt: ${JSON.stringify(receipt)}`);
  if (wantsJson(values)) {
    io.out(JSON.stringify(result, null, 2));
  } else {
    for (const c of result.content as { type: string; text?: string }[]) io.out(c.text ?? JSON.stringify(c));
  }
  if (result.isError === true) throw new CliError('the tool answered with an error');
}

const call: CliCommand = {
  name: 'mcp call',
  summary: 'call an MCP tool of the gateway, paying it with your wallet',
  usage:
    '<tool> [--args <json>] --chain sui|solana --key <file> [--rpc <url>] [--max <usdc>|none] [--max-retries <n>] [--project <slug>] [--proof-file <file>] [--payment-file <file>]',
  details: [
    'Progress goes to stderr, the tool result to stdout (its text; --json: the whole result).',
    `--max refuses to pay more than that per call (default ${DEFAULT_MAX_PER_REQUEST} USDC; "none" lifts the cap).`,
    'If the payment went through but the call was not delivered, the call and its payment are saved',
    '(--proof-file, default $TOLLGATE_CONFIG_DIR/payments/mcp-<time>-<tx>.json): send them again with',
    '`tollgate mcp call --payment-file <file> …`, which pays nothing.',
  ].join('\n'),
  options: {
    args: { type: 'string' },
    chain: { type: 'string' },
    key: { type: 'string' },
    rpc: { type: 'string' },
    max: { type: 'string' },
    'max-retries': { type: 'string' },
    project: { type: 'string' },
    'proof-file': { type: 'string' },
    'payment-file': { type: 'string' },
  },
  positionals: true,
  async run(io, values, positionals) {
    const savedPath = optionalString(values, 'payment-file');
    const saved = savedPath ? (JSON.parse(readFileSync(savedPath, 'utf8')) as SavedToolCall) : null;
    const name = positionals[0] ?? saved?.tool;
    if (!name) throw new UsageError('the tool to call is required');
    const args =
      saved && optionalString(values, 'args') === undefined
        ? saved.args
        : parseArgs(optionalString(values, 'args'));
    const retries = optionalString(values, 'max-retries');
    if (retries !== undefined && !/^\d+$/.test(retries))
      throw new UsageError('--max-retries must be a whole number');
    const max = optionalString(values, 'max');
    const server = saved?.server ?? serverUrl(values, io);
    const client = await connect(server);
    try {
      const wallets = saved ? [] : [await walletFrom(values, io.env, server)];
      const mcp = payingMcpClient(client, {
        wallets,
        maxPerRequest: max === 'none' ? null : (max ?? DEFAULT_MAX_PER_REQUEST),
        ...(retries !== undefined ? { maxRetries: Number(retries) } : {}),
        onEvent: progress(io),
      });
      let result: ToolResult;
      try {
        result = saved ? await mcp.retryToolCall(name, args, saved.payment) : await mcp.callTool(name, args);
      } catch (e) {
        if (!(e instanceof UndeliveredToolCallError)) throw e;
        const path = keep(io, values, server, e);
        throw new CliError(`${e.message}\nsend it again with: tollgate mcp call --payment-file ${path}`);
      }
      printResult(io, values, result);
      return undefined;
    } finally {
      await client.close().catch(() => {});
    }
  },
};

export const commands: CliCommand[] = [tools, call];
