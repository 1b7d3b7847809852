/**
 * What the shared repositories need to know about the database under them. Only
 * what really differs between SQLite and PostgreSQL lives here; everything else
 * is one Kysely query path.
 */
import type { ColumnDataType, CompiledQuery, Expression, Kysely, QueryResult } from 'kysely';
import type { Database } from './schema.ts';

export type ColumnType = ColumnDataType | Expression<unknown>;

export interface Backend {
  readonly kind: 'sqlite' | 'postgres';
  readonly db: Kysely<Database>;
  /** Column types used by the migrations. */
  readonly types: {
    /** Text compared byte-wise, so slug and id order is the same in both backends. */
    key: ColumnType;
    bool: ColumnType;
    /** 64-bit integers (milliseconds). */
    ms: ColumnType;
    /** Atomic USDC units; always written and read as a decimal string. */
    amount: ColumnType;
    blob: ColumnType;
  };
  isUniqueViolation(err: unknown): boolean;
  /**
   * Runs a compiled statement outside any transaction, as `db.executeQuery` does; a backend
   * may take a shorter way to the database (SQLite: straight to its driver). For the paid
   * path's prepared statements (prepared.ts).
   */
  execute<R>(query: CompiledQuery): Promise<QueryResult<R>>;
  /**
   * Locks a conversation row for the rest of the transaction, so concurrent appends
   * take seq numbers one after the other. Resolves false when the row is missing.
   */
  lockConversation(trx: Kysely<Database>, id: string): Promise<boolean>;
}

/** The slice of a pino logger the store uses. */
export interface StoreLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
