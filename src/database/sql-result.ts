import type { TransactionHost } from './transaction-host.js';

/**
 * The rows of a raw `query()` result. TypeORM's PostgreSQL driver answers `UPDATE … RETURNING` and
 * `DELETE … RETURNING` with `[rows, rowCount]`, but SELECT and INSERT with the rows themselves.
 */
export function returnedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}

/** Runs one statement in the current unit of work (or on the pool) and returns its rows, whatever its kind. */
export async function queryRows<T>(tx: TransactionHost, sql: string, params: unknown[] = []): Promise<T[]> {
  return returnedRows<T>(await tx.manager.query(sql, params));
}

/** The first row of one statement, or null. */
export async function queryFirst<T>(tx: TransactionHost, sql: string, params: unknown[] = []): Promise<T | null> {
  return (await queryRows<T>(tx, sql, params))[0] ?? null;
}
