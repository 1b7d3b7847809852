/**
 * The real gateway (the shared integration harness: sandbox chains, SQLite, funded
 * payers) with a models file naming a local OpenAI-wire upstream and the local models.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashToken, newAccessToken } from '../../src/auth/tokens.ts';
import type { ModelsFile } from '../../src/inference/catalogue.ts';
import type { Owner } from '../../src/store/store.ts';
import { type Chains, type Harness, startHarness } from '../support/gateway-harness.ts';
import { type FakeOpenAi, startFakeOpenAi } from './fake-openai.ts';

export const PRICING_DATE = '2026-10-01';

export function modelsFile(fakeUrl: string): ModelsFile {
  return {
    pricingSourceVersion: PRICING_DATE,
    models: [
      {
        id: 'fake-chat',
        kind: 'chat',
        upstream: {
          type: 'openai',
          baseUrl: fakeUrl,
          apiKey: 'sk-upstream-secret',
          model: 'vendor/fake-chat-large',
          timeoutMs: 2000,
        },
        contextLength: 1000,
        maxOutputTokens: 50,
        defaultMaxTokens: 20,
        inputPrice: '0.000003',
        outputPrice: '0.000015',
      },
      {
        id: 'fake-embed',
        kind: 'embeddings',
        upstream: { type: 'openai', baseUrl: fakeUrl, timeoutMs: 2000 },
        contextLength: 100,
        inputPrice: '0.0000001',
      },
      {
        id: 'tollgate-dev-chat',
        kind: 'chat',
        upstream: { type: 'local-chat' },
        contextLength: 8192,
        maxOutputTokens: 1024,
        defaultMaxTokens: 64,
        inputPrice: '0.000001',
        outputPrice: '0.000002',
      },
      {
        id: 'universal-sentence-encoder-lite',
        kind: 'embeddings',
        upstream: { type: 'local-embeddings' },
        contextLength: 2048,
        inputPrice: '0.00000002',
      },
    ],
  };
}

export interface InferenceHarness extends Harness {
  fake: FakeOpenAi;
  /** A bearer token for a fresh wallet owner. */
  signIn(owner?: Owner): Promise<{ token: string; owner: Owner }>;
}

export async function startInferenceHarness(
  opts: { chains?: Chains; env?: Record<string, string>; logLines?: string[] } = {},
): Promise<InferenceHarness> {
  const fake = await startFakeOpenAi();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-models-'));
  const file = join(dir, 'models.json');
  writeFileSync(file, JSON.stringify(modelsFile(fake.url)));
  const h = await startHarness({
    ...(opts.chains ? { chains: opts.chains } : {}),
    env: { ...opts.env, TOLLGATE_MODELS_FILE: file },
    ...(opts.logLines ? { logLines: opts.logLines } : {}),
  });
  return {
    ...h,
    fake,
    async signIn(owner = { chain: 'solana', address: `Owner${randomBytes(8).toString('hex')}` }) {
      const token = newAccessToken();
      const now = Date.now();
      await h.store.auth.createSession({
        tokenHash: hashToken(token),
        owner,
        createdAtMs: now,
        expiresAtMs: now + 3_600_000,
      });
      return { token, owner };
    },
    async close() {
      await h.close();
      await h.deps.inference.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
