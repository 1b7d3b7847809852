/**
 * Requests the gateway makes to its own routes in-process (an MCP tool call is served by
 * the route it stands for, through `app.inject`). They carry a header with a per-process
 * random token, so that what was already counted for the outer request (the rate limit)
 * is not counted again: the first in-process call of an outer request only (an MCP batch
 * of many tool calls takes a token for each call after the first). A caller cannot forge it: the token never leaves the process (the
 * forwarder drops every client-sent `x-tollgate-*` header before the upstream).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const HEADER = 'x-tollgate-inner-call';
const TOKEN = randomBytes(16).toString('hex');
const TOKEN_BYTES = Buffer.from(TOKEN);

/** The header an in-process request carries. */
export function innerCallHeaders(): Record<string, string> {
  return { [HEADER]: TOKEN };
}

/** Whether a request was made by this process to itself. */
export function isInnerCall(headers: IncomingHttpHeaders): boolean {
  const given = headers[HEADER];
  if (typeof given !== 'string' || given.length !== TOKEN.length) return false;
  // Node reads header bytes as latin1: one byte per character, so the lengths match (a UTF-8
  // encoding of bytes 0x80-0xFF would double them and make timingSafeEqual throw).
  return timingSafeEqual(Buffer.from(given, 'latin1'), TOKEN_BYTES);
}
