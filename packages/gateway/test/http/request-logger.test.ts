/**
 * request.log (made lazily, http/request-logger.ts): a line written through it carries
 * the request's id, the same as the x-request-id answered and the access line's reqId.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';

let h: Harness;
const lines: string[] = [];

beforeAll(async () => {
  h = await startHarness({ env: { LOG_LEVEL: 'info' }, logLines: lines });
});
afterAll(async () => {
  await h?.close();
});

describe('the request logger', () => {
  it('writes its lines with the request id of each request', async () => {
    const ids: string[] = [];
    for (const id of ['req-log-a', 'req-log-b']) {
      const res = await fetch(`${h.baseUrl}/v1/conversations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': id },
        body: '{not json',
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('x-request-id')).toBe(id);
      ids.push(id);
    }
    const rejected = lines
      .map((l) => JSON.parse(l) as { msg: string; reqId?: string; code?: string })
      .filter((l) => l.msg === 'request rejected');
    expect(rejected.map((l) => l.reqId)).toEqual(ids);
    expect(rejected.every((l) => l.code === 'invalid_request')).toBe(true);
  });
});
