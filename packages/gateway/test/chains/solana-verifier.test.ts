import { makeSolanaHarness } from './solana-harness.ts';
import { runVerifierContract } from './verifier-contract.ts';

runVerifierContract('solana', makeSolanaHarness);
