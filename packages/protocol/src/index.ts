export * from './amounts.ts';
export * from './errors.ts';
export * from './types.ts';
