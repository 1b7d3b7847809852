/** Where the benches leave their results: bench/results/<name>.json. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RESULTS = new URL('../results/', import.meta.url).pathname;

/**
 * Writes bench/results/`name` as indented JSON: when the run started (`started`, ms since
 * the epoch) and how long it took, then `fields` in their order. Returns the file's path.
 */
export function writeResults(name: string, started: number, fields: Record<string, unknown>): string {
  mkdirSync(RESULTS, { recursive: true });
  const out = join(RESULTS, name);
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        startedAt: new Date(started).toISOString(),
        durationS: (Date.now() - started) / 1000,
        ...fields,
      },
      null,
      2,
    )}\n`,
  );
  return out;
}
