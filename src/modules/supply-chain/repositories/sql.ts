import { queryFirst } from '../../../database/sql-result.js';
import type { TransactionHost } from '../../../database/transaction-host.js';

export async function countOf(tx: TransactionHost, sql: string, params: unknown[] = []): Promise<number> {
  const row = await queryFirst<{ count: string | number }>(tx, sql, params);
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
