/**
 * Operator commands, run beside the gateway against its configuration and database:
 * `node packages/gateway/src/ops/cli.ts payout …` (`npm run payout -- …`) and
 * `… reconcile …` (`npm run reconcile -- …`), `… refund …` (`npm run refund -- …`).
 */

const io = {
  out: (text: string) => void process.stdout.write(text),
  err: (text: string) => void process.stderr.write(text),
};

// Each command is loaded only when run: a start costs one command's modules, not all three.
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'payout') return (await import('./payout-command.ts')).payoutCommand(rest, process.env, io);
  if (command === 'reconcile') {
    return (await import('./reconcile-command.ts')).reconcileCommand(rest, process.env, io);
  }
  if (command === 'refund') return (await import('./refund-command.ts')).refundCommand(rest, process.env, io);
  const [payout, reconcile, refund] = await Promise.all([
    import('./payout-command.ts'),
    import('./reconcile-command.ts'),
    import('./refund-command.ts'),
  ]);
  io.err(
    `tollgate operator commands:\n  ${payout.PAYOUT_USAGE}\n  ${reconcile.RECONCILE_USAGE}\n  ${refund.REFUND_USAGE}\n`,
  );
  return 2;
}

// Exit explicitly: idle keep-alive connections to the chain nodes must not hold the process open.
const exit = (code: number) => process.stdout.write('', () => process.exit(code));
main(process.argv.slice(2)).then(exit, (e: unknown) => {
  console.error('tollgate: operator command failed:', e);
  exit(1);
});
