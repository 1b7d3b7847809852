/**
 * Adapter for any OpenAI-compatible HTTP server (OpenAI, OpenRouter, vLLM, llama.cpp,
 * Ollama): POST {baseUrl}/chat/completions and /embeddings over a pooled undici Agent,
 * JSON or SSE. Upstreams are configured by the operator, so no SSRF guard here.
 */
import { Agent, type Dispatcher, request } from 'undici';
import { sseData } from './sse.ts';
import {
  type ChatUpstream,
  type EmbeddingsUpstream,
  failed,
  type Json,
  UpstreamCut,
  type UpstreamResult,
} from './upstream.ts';

export interface OpenAiUpstreamOptions {
  baseUrl: string;
  apiKey?: string;
  /** Time to response headers, and the longest silence while a body streams. */
  timeoutMs: number;
  maxResponseBytes: number;
  dispatcher?: Dispatcher;
}

/** Upstream statuses that are the caller's own fault and so count as delivered. */
const CALLER_FAULT = new Set([400, 413, 422]);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

export function createInferenceAgent(): Agent {
  return new Agent({ keepAliveTimeout: 30_000, connections: 64 });
}

type Body = Dispatcher.ResponseData['body'];

async function readCapped(body: Body, cap: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > cap) {
      body.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function errorCode(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' ? code : '';
}

function asJson(buf: Buffer): Json | null {
  try {
    const v: unknown = JSON.parse(buf.toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
  } catch {
    return null;
  }
}

export function createOpenAiUpstream(opts: OpenAiUpstreamOptions): ChatUpstream & EmbeddingsUpstream {
  const dispatcher = opts.dispatcher ?? createInferenceAgent();
  const base = opts.baseUrl.replace(/\/+$/, '');

  async function post(
    path: string,
    body: Json,
    signal: AbortSignal,
    stream: boolean,
  ): Promise<UpstreamResult<Body>> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${base}${path}`, {
        method: 'POST',
        dispatcher,
        signal,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
        headers: {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
      });
    } catch (e) {
      if (signal.aborted) return failed('upstream_error', 'aborted');
      return TIMEOUT_CODES.has(errorCode(e))
        ? failed('upstream_timeout', 'timeout')
        : failed('upstream_error', 'connect_failed');
    }
    const { statusCode: status } = res;
    if (status >= 200 && status < 300) return { ok: true, value: res.body };
    const buf = await readCapped(res.body, 64 * 1024).catch(() => null);
    if (CALLER_FAULT.has(status)) {
      const parsed = buf ? asJson(buf) : null;
      return {
        ok: false,
        kind: 'rejected',
        status,
        body: parsed ?? { error: { message: `upstream answered ${status}` } },
      };
    }
    // 401/403/404/429/5xx: the operator's key, model name or the provider is at fault, not the caller.
    return failed('upstream_error', `status_${status}`, status);
  }

  async function json(path: string, body: Json, signal: AbortSignal): Promise<UpstreamResult<Json>> {
    const r = await post(path, body, signal, false);
    if (!r.ok) return r;
    let buf: Buffer | null;
    try {
      buf = await readCapped(r.value, opts.maxResponseBytes);
    } catch (e) {
      return TIMEOUT_CODES.has(errorCode(e))
        ? failed('upstream_timeout', 'timeout')
        : failed('upstream_error', 'body_cut');
    }
    if (!buf) return failed('upstream_error', 'response_too_large');
    const parsed = asJson(buf);
    return parsed ? { ok: true, value: parsed } : failed('upstream_error', 'bad_response');
  }

  async function* chunks(body: Body): AsyncGenerator<Json> {
    let done = false;
    try {
      for await (const data of sseData(body)) {
        if (data === '[DONE]') {
          done = true;
          break;
        }
        const parsed = asJson(Buffer.from(data));
        if (!parsed) throw new UpstreamCut('bad_event');
        // Providers report mid-stream failures as an event with `error` after a 200 (OpenRouter).
        if (parsed.error !== undefined && parsed.error !== null) throw new UpstreamCut('error_event');
        yield parsed;
      }
    } catch (e) {
      if (e instanceof UpstreamCut) throw e;
      throw new UpstreamCut(TIMEOUT_CODES.has(errorCode(e)) ? 'timeout' : 'body_cut');
    } finally {
      if (!done) body.destroy();
      else body.resume();
    }
    if (!done) throw new UpstreamCut('ended_without_done');
  }

  return {
    complete: (body, signal) => json('/chat/completions', body, signal),
    embed: (body, signal) => json('/embeddings', body, signal),
    async stream(body, signal) {
      const r = await post('/chat/completions', body, signal, true);
      if (!r.ok) return r;
      return { ok: true, value: chunks(r.value) };
    },
  };
}
