import { ProtocolError } from './errors.ts';
import { paymentRequirementSchema } from './schemas.ts';
import type { AcceptOption, Chain, PaymentRequirement } from './types.ts';

/**
 * Picks the accept option for the payer's chain.
 * Throws ProtocolError('unsupported_chain') when the requirement does not offer it.
 * @example
 * const option = selectPaymentOption(await res.json(), 'sui');
 */
export function selectPaymentOption(
  requirement: PaymentRequirement,
  chain: Chain,
  network?: string,
): AcceptOption {
  const option = requirement.accepts.find(
    (a) => a.chain === chain && (network === undefined || a.network === network),
  );
  if (!option) {
    const offered = requirement.accepts.map((a) => `${a.chain}/${a.network}`).join(', ') || 'none';
    throw new ProtocolError('unsupported_chain', `chain ${chain} is not accepted here (offered: ${offered})`);
  }
  return option;
}

/** Validates a 402 body; throws ProtocolError('invalid_requirement'). */
export function parsePaymentRequirement(body: unknown): PaymentRequirement {
  const parsed = paymentRequirementSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ProtocolError(
      'invalid_requirement',
      `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data as PaymentRequirement;
}
