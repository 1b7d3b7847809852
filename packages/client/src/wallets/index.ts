export * from './keyfiles.ts';
export * from './solana.ts';
export * from './sui.ts';
export * from './wallet.ts';
