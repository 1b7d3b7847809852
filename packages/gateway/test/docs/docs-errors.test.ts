import { readFileSync } from 'node:fs';
import { CLIENT_ERROR_CODES, ERROR_STATUS } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');

function tableRows(heading: string): string[][] {
  const start = doc.indexOf(heading);
  const section = doc.slice(start, doc.indexOf('\n## ', start + heading.length) >>> 0 || undefined);
  return section
    .split('\n')
    .filter((l) => /^\| `/.test(l))
    .map((l) =>
      l
        .split('|')
        .map((c) => c.trim())
        .filter(Boolean),
    );
}

describe('docs/errors.md', () => {
  it('lists exactly the server error codes, each with its status', () => {
    const rows = tableRows('## Codes').filter((r) => /^\d{3}$/.test(r[1] ?? ''));
    const documented = Object.fromEntries(rows.map((r) => [r[0]!.replaceAll('`', ''), Number(r[1])]));
    expect(documented).toEqual(ERROR_STATUS);
  });

  it('lists exactly the client-side codes', () => {
    const rows = tableRows('Client-side only').filter((r) => r.length === 2);
    expect(rows.map((r) => r[0]!.replaceAll('`', '')).sort()).toEqual([...CLIENT_ERROR_CODES].sort());
  });
});

describe('docs/errors.md refusal reasons', () => {
  it('lists exactly the reasons the gate and the chain verifiers give', async () => {
    const { REJECT_REASONS } = await import('../../src/chains/chain.ts');
    const { GATE_REJECT_REASONS } = await import('../../src/payments/gate.ts');
    const documented = tableRows('## Reasons on a refused proof').map((r) => r[0]!.replaceAll('`', ''));
    expect(documented.sort()).toEqual([...new Set([...REJECT_REASONS, ...GATE_REJECT_REASONS])].sort());
  });
});
