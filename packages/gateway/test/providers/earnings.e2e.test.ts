/** Earnings, payments and payer history on SQLite (the scenario: earnings-scenario.ts). */
import { earningsScenario } from './earnings-scenario.ts';

earningsScenario('SQLite', () => ({}));
