/** Sandbox wallets use the client's key files (the chains' CLI formats). */
export {
  loadOrCreateSolanaKey,
  loadOrCreateSuiKey,
  newSolanaKey,
  newSuiKey,
  type SolanaKey,
  type SuiKey,
} from '@tollgate/client';
