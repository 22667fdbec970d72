import pg from 'pg';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run the tests through jest (global setup sets it)`);
  }
  return value;
}

export function urlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function adminQuery(serverUrl: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: urlFor(serverUrl, 'postgres') });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database for one test file, cloned from the run's migrated template: each file gets a clean
 * schema in ~100 ms and files run in parallel without seeing each other's data.
 */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const serverUrl = required('QUIRE_TEST_SERVER_URL');
  const template = required('QUIRE_TEST_TEMPLATE');
  const name = `${required('QUIRE_TEST_RUN_PREFIX')}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  // CREATE DATABASE … TEMPLATE fails while another session is connected to the template: retry briefly.
  for (let attempt = 0; ; attempt += 1) {
    try {
      await adminQuery(serverUrl, `CREATE DATABASE "${name}" TEMPLATE "${template}"`);
      break;
    } catch (error) {
      if (attempt >= 30) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
    }
  }
  return {
    url: urlFor(serverUrl, name),
    drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).then(() => undefined),
  };
}

/**
 * Undoes the newest migrations of `db` down to and including `name` (a migration class name), so a migration's
 * `down` can be tested whatever was added after it.
 */
export async function undoMigrationsThrough(
  db: { query: (sql: string) => Promise<Array<{ name: string }>>; undoLastMigration: (options: { transaction: 'each' }) => Promise<void> },
  name: string,
): Promise<void> {
  for (;;) {
    const [last] = await db.query(`SELECT name FROM schema_migrations ORDER BY timestamp DESC, id DESC LIMIT 1`);
    if (!last) {
      throw new Error(`migration ${name} is not applied`);
    }
    await db.undoLastMigration({ transaction: 'each' });
    if (last.name === name) {
      return;
    }
  }
}
