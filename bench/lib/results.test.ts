import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from './options.ts';
import { readResults } from './results.ts';

const dir = mkdtempSync(join(tmpdir(), 'bench-results-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('readResults', () => {
  it('gives back a saved run with its scenarios and options', () => {
    const path = file('ok.json', JSON.stringify({ startedAt: 'x', options: { rounds: 3 }, scenarios: [] }));
    expect(readResults(path)).toEqual({ startedAt: 'x', options: { rounds: 3 }, scenarios: [] });
  });

  it.each([
    ['missing.json', null, 'cannot read'],
    ['text.json', 'not json', 'is not JSON'],
    ['null.json', 'null', 'is not a results file'],
    ['number.json', '42', 'is not a results file'],
    ['no-options.json', '{"scenarios":[]}', 'is not a results file'],
    ['null-options.json', '{"scenarios":[],"options":null}', 'is not a results file'],
    ['no-scenarios.json', '{"options":{}}', 'is not a results file'],
  ])('refuses %s as a usage error (%s)', (name, text, message) => {
    const path = text === null ? join(dir, name) : file(name, text);
    expect(() => readResults(path)).toThrow(UsageError);
    expect(() => readResults(path)).toThrow(message);
  });
});
