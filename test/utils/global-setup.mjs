// Plain ESM on purpose: Jest loads global setup outside its module mapper, so this file uses the
// compiled service in dist/ (built by `npm test`'s pretest step) rather than the TypeScript sources.
import { mkdirSync } from 'node:fs';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../dist/src/config/app.config.js';
import { dataSourceOptions } from '../../dist/src/database/data-source-options.js';
import {
  EmbeddedPostgresError,
  embeddedServerRunning,
  startEmbeddedPostgres,
} from '../../dist/src/database/embedded-postgres.js';

/** Databases of one run share this prefix, so concurrent runs on one server never touch each other's. */
export function runPrefix() {
  return process.env.QUIRE_TEST_RUN_PREFIX;
}

export function urlFor(serverUrl, database) {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function adminQuery(serverUrl, sql) {
  const client = new pg.Client({ connectionString: urlFor(serverUrl, 'postgres') });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Starts PostgreSQL once for the whole run (the embedded server unless DATABASE_URL names one) and builds
 * a template database with every migration applied; each test file clones it.
 */
export default async function globalSetup() {
  mkdirSync('.data', { recursive: true });
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    // One embedded server per data directory; a second concurrent run gets a directory of its own.
    const dir = embeddedServerRunning('.data/test-pg') ? `.data/test-pg-${process.pid}` : '.data/test-pg';
    const embedded = await startEmbeddedPostgres(dir, 'postgres').catch((error) => {
      // Its message says what to do in one sentence; jest would bury it under a stack.
      if (error instanceof EmbeddedPostgresError) {
        process.stderr.write(`Test setup failed: ${error.message}\n`);
        process.exit(1);
      }
      throw error;
    });
    globalThis.__QUIRE_EMBEDDED__ = embedded;
    serverUrl = embedded.url;
  }
  const prefix = `quire_t${process.pid}_${Date.now().toString(36)}`;
  const template = `${prefix}_template`;
  await adminQuery(serverUrl, `CREATE DATABASE "${template}"`);
  const dataSource = new DataSource(dataSourceOptions(loadConfig({}), urlFor(serverUrl, template)));
  await dataSource.initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
  // Workers are started after global setup and inherit these.
  process.env.QUIRE_TEST_SERVER_URL = serverUrl;
  process.env.QUIRE_TEST_RUN_PREFIX = prefix;
  process.env.QUIRE_TEST_TEMPLATE = template;
}
