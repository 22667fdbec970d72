import pg from 'pg';

const TIMESTAMPTZ_OID = 1184;

/**
 * Installs, once per process, a `timestamptz` parser that remembers the last two texts it parsed. Rows written by
 * one statement share their timestamps (`now()` is the transaction's time): a bulk write's UPDATE returns 1,000
 * identical `updated_at` values, and its locked read 1,000 rows whose `created_at` and `updated_at` (two texts, in
 * turn) are often those of one earlier statement. Each text is parsed by `pg`'s own parser once in a run of
 * repeats; every column still gets a Date object of its own. Other texts go to that parser as before, so the results
 * are exactly pg's.
 */
export function installTimestampParser(): void {
  const parse = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as ((text: string) => unknown) & { quireMemo?: true };
  if (parse.quireMemo) {
    return;
  }
  const texts: [string | undefined, string | undefined] = [undefined, undefined];
  const values: [unknown, unknown] = [undefined, undefined];
  let next = 0;
  const parsed = (text: string): unknown => {
    if (text === texts[0]) {
      return values[0];
    }
    if (text === texts[1]) {
      return values[1];
    }
    const value = parse(text);
    texts[next] = text;
    values[next] = value;
    next = 1 - next;
    return value;
  };
  const memoized = Object.assign(
    (text: string): unknown => {
      const value = parsed(text);
      return value instanceof Date ? new Date(value.getTime()) : value;
    },
    { quireMemo: true as const },
  );
  pg.types.setTypeParser(TIMESTAMPTZ_OID, 'text', memoized);
}
