import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCatalogue, CatalogueError, catalogueFor, SANDBOX_MODELS } from './catalogue.ts';

const chat = {
  id: 'openai/gpt-4o-mini',
  kind: 'chat',
  upstream: { type: 'openai', baseUrl: 'https://openrouter.ai/api/v1/', apiKey: 'sk-or-x' },
  contextLength: 128_000,
  maxOutputTokens: 16_384,
  inputPrice: '0.00000015',
  outputPrice: '0.0000006',
  pricingSourceVersion: '2026-11-01',
};

describe('model catalogue', () => {
  it('builds entries with BigInt prices, defaults and the newest pricing date', () => {
    const c = buildCatalogue({
      pricingSourceVersion: '2026-10-01',
      models: [chat, { ...chat, id: 'b', pricingSourceVersion: undefined }],
    });
    const m = c.get('openai/gpt-4o-mini')!;
    expect(m).toMatchObject({
      inputPerMillion: 150_000n,
      outputPerMillion: 600_000n,
      defaultMaxTokens: 1024,
      tokenizer: 'o200k_base',
      ownedBy: 'openai',
      upstream: { baseUrl: 'https://openrouter.ai/api/v1', maxTokensParam: 'max_tokens', timeoutMs: 120_000 },
    });
    expect(c.get('b')?.pricingSourceVersion).toBe('2026-10-01');
    expect(c.pricingSourceVersion).toBe('2026-11-01');
  });

  it('rejects prices with more than 12 decimals, duplicates, a missing date and mismatched kinds', () => {
    const bad = [
      [{ ...chat, inputPrice: '0.0000000000001' }],
      [{ ...chat, inputPrice: '1e-6' }],
      [chat, chat],
      [{ ...chat, pricingSourceVersion: undefined }],
      [{ ...chat, upstream: { type: 'local-embeddings' } }],
      [{ ...chat, maxOutputTokens: 200_000 }],
      [{ ...chat, surprise: true }],
    ];
    for (const models of bad) expect(() => buildCatalogue(models)).toThrow(CatalogueError);
  });

  it('ships a valid sandbox catalogue with the dev chat stand-in and the bundled embeddings model', () => {
    const c = buildCatalogue(SANDBOX_MODELS);
    expect(c.models.map((m) => [m.id, m.kind, m.upstream.type])).toEqual([
      ['tollgate-dev-chat', 'chat', 'local-chat'],
      ['universal-sentence-encoder-lite', 'embeddings', 'local-embeddings'],
    ]);
  });

  it('keeps the dev chat stand-in out of production and offers no models there by default', () => {
    expect(catalogueFor({ modelsFile: null, sandbox: false }).models).toEqual([]);
    expect(catalogueFor({ modelsFile: null, sandbox: true }).get('tollgate-dev-chat')).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'models-'));
    const file = join(dir, 'models.json');
    writeFileSync(file, JSON.stringify(SANDBOX_MODELS));
    expect(() => catalogueFor({ modelsFile: file, sandbox: false })).toThrow(/development stand-in/);
    expect(catalogueFor({ modelsFile: file, sandbox: true }).models).toHaveLength(2);
    rmSync(dir, { recursive: true });
  });
});
