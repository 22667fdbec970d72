import type { TransactionHost } from '../../../database/transaction-host.js';

/**
 * Runs one statement in the current unit of work and returns its rows. TypeORM's PostgreSQL driver answers
 * `UPDATE … RETURNING` with `[rows, rowCount]` but SELECT and INSERT with the rows themselves.
 */
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

export async function countOf(tx: TransactionHost, sql: string, params: unknown[] = []): Promise<number> {
  const row = await firstOf<{ count: string | number }>(tx, sql, params);
  return Number(row?.count ?? 0);
}

export interface Paging {
  limit: number;
  offset: number;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}
