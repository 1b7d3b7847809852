/**
 * Operator commands, run beside the gateway against its configuration and database:
 * `node packages/gateway/src/ops/cli.ts payout …` (`npm run payout -- …`) and
 * `… reconcile …` (`npm run reconcile -- …`), `… refund …` (`npm run refund -- …`).
 */
import { PAYOUT_USAGE, payoutCommand } from './payout-command.ts';
import { RECONCILE_USAGE, reconcileCommand } from './reconcile-command.ts';
import { REFUND_USAGE, refundCommand } from './refund-command.ts';

const io = {
  out: (text: string) => void process.stdout.write(text),
  err: (text: string) => void process.stderr.write(text),
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'payout') return payoutCommand(rest, process.env, io);
  if (command === 'reconcile') return reconcileCommand(rest, process.env, io);
  if (command === 'refund') return refundCommand(rest, process.env, io);
  io.err(`tollgate operator commands:\n  ${PAYOUT_USAGE}\n  ${RECONCILE_USAGE}\n  ${REFUND_USAGE}\n`);
  return 2;
}

// Exit explicitly: idle keep-alive connections to the chain nodes must not hold the process open.
const exit = (code: number) => process.stdout.write('', () => process.exit(code));
main(process.argv.slice(2)).then(exit, (e: unknown) => {
  console.error('tollgate: operator command failed:', e);
  exit(1);
});
