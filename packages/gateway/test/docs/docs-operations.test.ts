/** docs/operations.md documents exactly the metrics the gateway exposes and every access-log field. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ACCESS_LOG_FIELDS } from '../../src/http/access-log.ts';
import { createMetrics } from '../../src/metrics.ts';

const doc = readFileSync(new URL('../../../../docs/operations.md', import.meta.url), 'utf8');

/** First cells of the table rows in a section (up to the next heading of the same or a higher level). */
function firstCells(heading: string): string[] {
  const start = doc.indexOf(heading);
  expect(start).toBeGreaterThanOrEqual(0);
  const level = heading.split(' ')[0]!;
  const next = doc.slice(start + heading.length).search(new RegExp(`\\n#{1,${level.length}} `));
  const section = doc.slice(start, next === -1 ? undefined : start + heading.length + next);
  return section
    .split('\n')
    .filter((l) => /^\| `/.test(l))
    .map((l) => l.split('|')[1]!.trim().replaceAll('`', ''));
}

describe('docs/operations.md', () => {
  it('lists exactly the tollgate_ metrics, each once', async () => {
    const names = (await createMetrics({ defaults: false }).registry.getMetricsAsJSON()).map((m) => m.name);
    const documented = [...firstCells('### Payments'), ...firstCells('### HTTP and upstreams')];
    expect([...documented].sort()).toEqual([...names].sort());
  });

  it('names the process metrics by their standard names', async () => {
    const names = (await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name);
    for (const name of ['process_cpu_user_seconds_total', 'nodejs_heap_size_total_bytes']) {
      expect(names).toContain(name);
      expect(doc).toContain(`\`${name}\``);
    }
  });

  it('documents every access-log field, in order', () => {
    const documented = firstCells('### The access line');
    expect(documented).toEqual([...ACCESS_LOG_FIELDS]);
  });
});
