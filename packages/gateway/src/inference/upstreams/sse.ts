/**
 * Server-sent events, as OpenAI-compatible servers send them: events separated by a
 * blank line, payload in `data:` lines, comments (`: keep-alive`) ignored.
 */

/** Largest single event accepted; a longer one means a broken or hostile upstream. */
const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/** Yields the `data` payload of each event (data lines joined by "\n"). Throws on an oversized event. */
export async function* sseData(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let idx = boundary(buf);
    while (idx.at >= 0) {
      const data = dataOf(buf.slice(0, idx.at));
      buf = buf.slice(idx.at + idx.len);
      if (data !== null) yield data;
      idx = boundary(buf);
    }
    if (buf.length > MAX_EVENT_BYTES) throw new Error('server-sent event too large');
  }
  buf += decoder.decode();
  const tail = dataOf(buf);
  if (tail !== null) yield tail;
}

function boundary(s: string): { at: number; len: number } {
  const m = /\r\n\r\n|\n\n|\r\r/.exec(s);
  return m ? { at: m.index, len: m[0].length } : { at: -1, len: 0 };
}

function dataOf(event: string): string | null {
  const data: string[] = [];
  for (const line of event.split(/\r\n|\n|\r/)) {
    if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
  }
  return data.length ? data.join('\n') : null;
}

/** One SSE event carrying `data` (a JSON value or the literal `[DONE]`). */
export function sseEvent(data: string): string {
  return `data: ${data}\n\n`;
}
