export * from '@tollgate/protocol';
export * from './pay-fetch.ts';
export * from './wallets/index.ts';
