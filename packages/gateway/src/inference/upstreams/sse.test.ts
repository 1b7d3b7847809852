import { describe, expect, it } from 'vitest';
import { sseData } from './sse.ts';

async function parse(parts: string[]): Promise<string[]> {
  async function* src() {
    for (const p of parts) yield new TextEncoder().encode(p);
  }
  const out: string[] = [];
  for await (const d of sseData(src())) out.push(d);
  return out;
}

describe('SSE parser', () => {
  it('joins events split across chunks and skips comments and other fields', async () => {
    expect(await parse([': ping\n\nda', 'ta: {"a":1}\n', '\ndata: [DO', 'NE]\n\n'])).toEqual([
      '{"a":1}',
      '[DONE]',
    ]);
  });

  it('accepts CRLF, multi-line data and a missing space after the colon', async () => {
    expect(await parse(['event: x\r\ndata:line1\r\ndata: line2\r\n\r\n'])).toEqual(['line1\nline2']);
  });

  it('keeps a multi-byte character split across chunks intact', async () => {
    const bytes = new TextEncoder().encode('data: "é"\n\n');
    async function* src() {
      yield bytes.slice(0, 8);
      yield bytes.slice(8);
    }
    const out: string[] = [];
    for await (const d of sseData(src())) out.push(d);
    expect(out).toEqual(['"é"']);
  });
});
