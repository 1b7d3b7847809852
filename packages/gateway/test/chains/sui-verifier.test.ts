import { makeSuiHarness } from './sui-harness.ts';
import { runVerifierContract } from './verifier-contract.ts';

runVerifierContract('sui', () => makeSuiHarness());
