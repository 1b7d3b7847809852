import { UniqueViolationError } from '../store.ts';
import type { Backend } from './backend.ts';

/** Runs a write, turning the backend's unique-key violation into UniqueViolationError. */
export async function translateUnique<T>(
  backend: Backend,
  message: string,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (backend.isUniqueViolation(err)) throw new UniqueViolationError(message, { cause: err });
    throw err;
  }
}
