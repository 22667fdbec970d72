import type { TransactionHost } from '../../../database/transaction-host.js';

/** Rows of one statement in the current unit of work (TypeORM answers UPDATE … RETURNING with [rows, count]). */
export async function rowsOf<T>(tx: TransactionHost, sql: string, params: unknown[] = []): Promise<T[]> {
  const result: unknown = await tx.manager.query(sql, params);
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}

export async function firstOf<T>(
  tx: TransactionHost,
  sql: string,
  params: unknown[] = [],
): Promise<T | null> {
  return (await rowsOf<T>(tx, sql, params))[0] ?? null;
}
