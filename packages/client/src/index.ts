export * from '@tollgate/protocol';
export * from './mcp.ts';
export * from './paid-retry.ts';
export * from './pay-fetch.ts';
export * from './sign-in.ts';
export * from './wallets/index.ts';
