import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { createCursors, DEFAULT_RANGE_MS, parseTime, resolveRange } from './payment-query.ts';

const SECRET = 'a'.repeat(43);
const OLD = 'b'.repeat(43);
const page = { after: { createdAtMs: 1_795_000_000_123, id: 'rdm_01ab' }, range: { fromMs: 5, toMs: 9 } };

function reasonOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (e) {
    if (e instanceof ApiError) return `${e.code}/${String(e.extra.reason)}`;
    throw e;
  }
  return undefined;
}

describe('payment list queries', () => {
  it('reads ISO-8601 and epoch milliseconds, and nothing else', () => {
    expect(parseTime('2026-11-25', 'from')).toBe(Date.UTC(2026, 10, 25));
    expect(parseTime('2026-11-25T12:00:00+01:00', 'from')).toBe(Date.UTC(2026, 10, 25, 11));
    expect(parseTime('1795000000123', 'to')).toBe(1_795_000_000_123);
    for (const bad of ['yesterday', '2026-13-45', '-5', '1e12', '99999999999999999', ' 2026-11-25x']) {
      expect([bad, reasonOf(() => parseTime(bad, 'from'))]).toEqual([bad, 'invalid_request/invalid_time']);
    }
  });

  it('defaults to the last 30 days and refuses an empty or reversed range', () => {
    expect(resolveRange({}, 100 * DEFAULT_RANGE_MS)).toEqual({
      fromMs: 99 * DEFAULT_RANGE_MS,
      toMs: 100 * DEFAULT_RANGE_MS,
    });
    expect(resolveRange({ from: '10' }, 1000)).toEqual({ fromMs: 10, toMs: 1000 });
    expect(reasonOf(() => resolveRange({ from: '10', to: '10' }, 1000))).toBe(
      'invalid_request/invalid_range',
    );
    expect(reasonOf(() => resolveRange({ from: '11', to: '10' }, 1000))).toBe(
      'invalid_request/invalid_range',
    );
  });

  it('opens only cursors it signed for the same listing, across a secret rotation', () => {
    const cursors = createCursors(SECRET, null);
    const c = cursors.encode('project:p1', page);
    expect(cursors.decode('project:p1', c)).toEqual(page);
    expect(reasonOf(() => cursors.decode('project:p2', c))).toBe('invalid_request/invalid_cursor');
    const [body, sig] = c.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify([1, 'rdm_01ab', 5, 9])).toString('base64url');
    for (const bad of [`${forged}.${sig}`, body, `${body}.${sig}.x`, `${body}.AAAA`, 'garbage', '.']) {
      expect([bad, reasonOf(() => cursors.decode('project:p1', bad))]).toEqual([
        bad,
        'invalid_request/invalid_cursor',
      ]);
    }
    // After a rotation the previous secret's cursors still open; a stranger's never do.
    expect(createCursors(OLD, SECRET).decode('project:p1', c)).toEqual(page);
    expect(reasonOf(() => createCursors(OLD, null).decode('project:p1', c))).toBe(
      'invalid_request/invalid_cursor',
    );
  });
});
