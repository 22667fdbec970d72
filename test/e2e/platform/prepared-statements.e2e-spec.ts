import pg from 'pg';
import { PreparingClient, prepared } from '../../../src/database/prepared-statements.js';
import { urlFor } from '../../utils/test-database.js';

/**
 * The pool's client (docs/performance.md, "Third pass"): a statement marked with prepared() is parsed
 * once per connection and then only executed; any other statement stays unnamed.
 */
describe('prepared statements', () => {
  const pool = new pg.Pool({
    connectionString: urlFor(process.env.QUIRE_TEST_SERVER_URL as string, 'postgres'),
    max: 1,
    Client: PreparingClient,
  });

  afterAll(() => pool.end());

  async function preparedOnConnection(): Promise<Array<{ name: string; statement: string }>> {
    return (
      await pool.query<{ name: string; statement: string }>(
        'SELECT name, statement FROM pg_prepared_statements',
      )
    ).rows;
  }

  it('prepares a marked statement once per connection and reuses it', async () => {
    const text = prepared('SELECT $1::int + 1 AS n /* prepared-statements spec */');
    expect((await pool.query(text, [1])).rows).toEqual([{ n: 2 }]);
    expect((await pool.query(text, [41])).rows).toEqual([{ n: 42 }]);
    const statements = (await preparedOnConnection()).filter((row) => row.statement === text);
    expect(statements).toHaveLength(1);
    expect(statements[0]?.name).toMatch(/^quire_[0-9a-f]{24}$/);
  });

  it('leaves unmarked statements unnamed', async () => {
    const text = 'SELECT $1::int * 2 AS n /* unmarked */';
    expect((await pool.query(text, [21])).rows).toEqual([{ n: 42 }]);
    expect((await preparedOnConnection()).some((row) => row.statement === text)).toBe(false);
  });

  it('reports a failing prepared statement and keeps the connection usable', async () => {
    const text = prepared('SELECT 1 / $1::int AS n /* division */');
    await expect(pool.query(text, [0])).rejects.toThrow(/division by zero/);
    expect((await pool.query(text, [1])).rows).toEqual([{ n: 1 }]);
  });
});
