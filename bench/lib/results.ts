/** Where the benches leave their results: bench/results/<name>.json. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BenchOptions, UsageError } from './options.ts';
import type { ScenarioSummary } from './report.ts';
import type { SoakResult } from './soak.ts';

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

/** What `npm run bench` saved of a run (writeResults in run.ts), as far as printing it again needs. */
export interface SavedRun {
  startedAt?: string;
  machine?: { cpu?: string; node?: string };
  options: BenchOptions;
  scenarios: ScenarioSummary[];
  soaks?: SoakResult[];
  facilitatorCalls?: unknown;
}

/** A results file of `npm run bench`, or a UsageError naming what is wrong with it (`--report`). */
export function readResults(file: string): SavedRun {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--report: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? e})`);
  }
  let saved: Partial<SavedRun> | null;
  try {
    saved = JSON.parse(text);
  } catch {
    throw new UsageError(`--report: ${file} is not JSON`);
  }
  if (
    saved === null ||
    typeof saved !== 'object' ||
    !Array.isArray(saved.scenarios) ||
    saved.options === null ||
    typeof saved.options !== 'object'
  )
    throw new UsageError(
      `--report: ${file} is not a results file of npm run bench (no scenarios or options)`,
    );
  return saved as SavedRun;
}
