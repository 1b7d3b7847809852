/** Settings of `npm run bench:scaling` from the command line. */
import { parseArgs } from 'node:util';
import { exitOnHelp, numberOption, UsageError } from './options.ts';

export const PARTS = ['endpoints', 'rows', 'concurrency', 'processes'] as const;
export type Part = (typeof PARTS)[number];

export interface ScalingOptions {
  quick: boolean;
  parts: Part[];
  rounds: number;
  roundS: number;
  paidRoundS: number;
  warmupS: number;
  /** Extra endpoints registered for the "endpoints" part. */
  endpoints: number;
  /** Redemption rows bulk-inserted for the "rows" part. */
  rows: number;
  /** Paid requests' store calls timed at each table size. */
  ops: number;
  /** Connection counts of the "concurrency" part. */
  levels: number[];
  payments: number;
  paymentBudgetS: number;
  logLevel: string;
  keep: boolean;
}

const HELP = `npm run bench:scaling -- [options]
  --quick                 shorter runs (2 s rounds, 250,000 rows, fewer payments): a few minutes
  --only LIST             parts to run: endpoints, rows, concurrency, processes (default all)
  --rounds N              measured rounds per configuration (default 3; 2 with --quick)
  --round-seconds S       length of each load run (default 4; 2 with --quick)
  --endpoints N           extra endpoints registered (default 10000)
  --rows N                redemption rows bulk-inserted (default 1000000; 250000 with --quick)
  --ops N                 paid requests' store calls timed per table size (default 2000; 500 with --quick)
  --levels LIST           connection counts (default 1,4,16,64,256)
  --payments N            real payments prepared for the processes part (default 9000; 4000 with --quick)
  --payment-budget S      stop preparing payments after S seconds (default 70; 30 with --quick)
  --log-level L           gateway LOG_LEVEL (default info)
  --keep                  keep the temp directory`;

export function parseScalingOptions(argv: string[]): ScalingOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      rounds: { type: 'string' },
      'round-seconds': { type: 'string' },
      endpoints: { type: 'string' },
      rows: { type: 'string' },
      ops: { type: 'string' },
      levels: { type: 'string' },
      payments: { type: 'string' },
      'payment-budget': { type: 'string' },
      'log-level': { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  exitOnHelp(values.help, HELP);
  const quick = values.quick === true;
  const num = numberOption(HELP);
  const only = (values.only ?? '').split(',').filter(Boolean);
  for (const p of only)
    if (!(PARTS as readonly string[]).includes(p)) throw new UsageError(`unknown part ${p}\n${HELP}`);
  const levels = (values.levels ?? '1,4,16,64,256').split(',').map((v) => num(v, 1, 1));
  const roundS = num(values['round-seconds'], quick ? 2 : 4, 2);
  return {
    quick,
    parts: only.length ? (only as Part[]) : [...PARTS],
    rounds: num(values.rounds, quick ? 2 : 3, 1),
    roundS,
    // Paid runs drain for 1 s, so their window is a second shorter.
    paidRoundS: Math.max(3, roundS),
    warmupS: 2,
    endpoints: num(values.endpoints, 10_000, 10),
    rows: num(values.rows, quick ? 250_000 : 1_000_000, 0),
    ops: num(values.ops, quick ? 500 : 2000, 10),
    levels,
    payments: num(values.payments, quick ? 4000 : 9000, 0),
    paymentBudgetS: num(values['payment-budget'], quick ? 30 : 70, 1),
    logLevel: values['log-level'] ?? 'info',
    keep: values.keep === true,
  };
}
