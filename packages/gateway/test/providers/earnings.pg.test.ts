/**
 * Earnings, payments and payer history on PostgreSQL (the scenario: earnings-scenario.ts).
 * Runs when DATABASE_URL_TEST is set; the gateway's store lives in a fresh schema, dropped after.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { earningsScenario } from './earnings-scenario.ts';

const PG = process.env['DATABASE_URL_TEST'];

if (!PG) {
  describe.skip('earnings on PostgreSQL (skipped: set DATABASE_URL_TEST=postgres://… to run)', () => {
    it('needs DATABASE_URL_TEST', () => {});
  });
} else {
  const schema = `tg_earn_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    const admin = new pg.Pool({ connectionString: PG, max: 1 });
    await admin.query(`drop schema if exists "${schema}" cascade`);
    await admin.end();
  });
  earningsScenario('PostgreSQL', () => ({ databaseUrl: PG, storeSchema: schema }));
}
