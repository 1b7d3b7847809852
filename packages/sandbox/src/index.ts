export * from './demo-api.ts';
export * from './keys.ts';
export * from './solana/index.ts';
export * from './sui/index.ts';
