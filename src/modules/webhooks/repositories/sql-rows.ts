/**
 * Rows of a raw `query()`: TypeORM's PostgreSQL driver answers `UPDATE … RETURNING` and `DELETE … RETURNING`
 * (also inside a WITH) with `[rows, rowCount]`, but SELECT and INSERT with the rows themselves.
 */
export function returnedRows<T>(result: unknown): T[] {
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
