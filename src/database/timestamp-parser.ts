import pg from 'pg';

const TIMESTAMPTZ_OID = 1184;

/**
 * Installs, once per process, a `timestamptz` parser that remembers the text it parsed last. Rows written by one
 * statement share their timestamps (`now()` is the transaction's time): a bulk write's UPDATE returns 1,000
 * identical `updated_at` values, and its locked read often 1,000 identical `created_at` values. Each is parsed
 * by `pg`'s own parser once; every column still gets a Date object of its own. Other texts go to that parser as
 * before, so the results are exactly pg's.
 */
export function installTimestampParser(): void {
  const parse = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as ((text: string) => unknown) & { quireMemo?: true };
  if (parse.quireMemo) {
    return;
  }
  let lastText: string | undefined;
  let lastValue: unknown;
  const memoized = Object.assign(
    (text: string): unknown => {
      if (text !== lastText) {
        lastValue = parse(text);
        lastText = text;
      }
      return lastValue instanceof Date ? new Date(lastValue.getTime()) : lastValue;
    },
    { quireMemo: true as const },
  );
  pg.types.setTypeParser(TIMESTAMPTZ_OID, 'text', memoized);
}
