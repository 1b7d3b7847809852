export * from './keyfiles.ts';
export * from './network.ts';
export * from './solana.ts';
export * from './sui.ts';
export * from './wallet.ts';
