import { adminQuery } from './global-setup.mjs';

/** Drops this run's databases and stops the embedded server it started. */
export default async function globalTeardown() {
  const serverUrl = process.env.QUIRE_TEST_SERVER_URL;
  const prefix = process.env.QUIRE_TEST_RUN_PREFIX;
  if (serverUrl && prefix) {
    const left = await adminQuery(serverUrl, `SELECT datname FROM pg_database WHERE datname LIKE '${prefix}%'`);
    for (const row of left.rows) {
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${row.datname}" WITH (FORCE)`);
    }
  }
  await globalThis.__QUIRE_EMBEDDED__?.stop();
}
