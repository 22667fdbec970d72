import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { platform, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import {
  type Account,
  type Binaries,
  EmbeddedPostgresError,
  embeddedDataLocation,
  embeddedServerRunning,
  ensurePostgresAccount,
  makeShared,
  runnableBinaries,
  runningAsRoot,
} from './embedded-postgres-placement.js';

export interface EmbeddedDatabase {
  url: string;
  /** Where the data lives: the directory asked for, or the one chosen instead (see embeddedDataLocation). */
  dataDir: string;
  /** True when the data lives elsewhere than asked, because the postgres user cannot reach that directory. */
  relocated: boolean;
  stop(): Promise<void>;
}

export { EmbeddedPostgresError, embeddedDataLocation, embeddedServerRunning };

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

const PASSWORD = 'quire-embedded';
const READY_LINE = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 120_000;

/**
 * initdb matches English output and the server logs the ready line in the messages locale: pin one that
 * exists here (as embedded-postgres does).
 */
function messagesLocale(): string {
  if (platform() === 'win32') {
    return 'C';
  }
  try {
    const available = new Set(
      execFileSync('locale', ['-a'], { encoding: 'utf8', stdio: 'pipe' })
        .split(/\r?\n/)
        .map((line) => line.trim()),
    );
    return ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((locale) => available.has(locale)) ?? 'C';
  } catch {
    return 'C';
  }
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

function spawnFailure(what: string, error: NodeJS.ErrnoException, binary: string): EmbeddedPostgresError {
  return new EmbeddedPostgresError(
    error.code === 'EACCES'
      ? `The embedded PostgreSQL could not run ${binary} (permission denied${runningAsRoot() ? ' for the postgres user' : ''}): move the checkout to a directory that user can enter, run as an ordinary user, or set DATABASE_URL.`
      : `The embedded PostgreSQL could not ${what} (${error.message}): set DATABASE_URL to use an existing server instead.`,
  );
}

async function initialise(
  binaries: Binaries,
  dataDir: string,
  account: Account | undefined,
  locale: string,
  log: (line: string) => void,
): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'quire-initdb-'));
  const passwordFile = join(scratch, 'password');
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (account) {
    chownSync(scratch, account.uid, account.gid);
    chownSync(passwordFile, account.uid, account.gid);
  }
  try {
    await new Promise<void>((resolveInit, reject) => {
      const child = spawn(
        binaries.initdb,
        [
          `--pgdata=${dataDir}`,
          '--auth=scram-sha-256',
          '--username=postgres',
          `--pwfile=${passwordFile}`,
          `--lc-messages=${locale}`,
        ],
        {
          ...account,
          cwd: dataDir,
          env: { ...process.env, LC_MESSAGES: locale },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      const collect = (chunk: Buffer): void => {
        output += chunk.toString('utf8');
        log(chunk.toString('utf8'));
      };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
      child.once('error', (error: NodeJS.ErrnoException) =>
        reject(spawnFailure('initialise its data directory', error, binaries.initdb)),
      );
      child.once('close', (code) =>
        code === 0
          ? resolveInit()
          : reject(
              new EmbeddedPostgresError(
                `The embedded PostgreSQL could not initialise ${dataDir} (initdb exited with ${code}: ${output.trim().split('\n').slice(-3).join(' ')}): remove that directory if it is a broken leftover, or set DATABASE_URL.`,
              ),
            ),
      );
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function startServer(
  binaries: Binaries,
  dataDir: string,
  port: number,
  account: Account | undefined,
  locale: string,
  log: (line: string) => void,
): Promise<ChildProcess> {
  const child = spawn(
    binaries.postgres,
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      '-c',
      'fsync=on',
    ],
    {
      ...account,
      cwd: dataDir,
      env: { ...process.env, LC_MESSAGES: locale },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolveStart, reject) => {
    let output = '';
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGINT');
      reject(
        new EmbeddedPostgresError(
          `The embedded PostgreSQL did not start within ${START_TIMEOUT_MS / 1000} s: set DATABASE_URL to use an existing server instead.`,
        ),
      );
    }, START_TIMEOUT_MS);
    // Read the server's log for as long as it runs: a full pipe would block it.
    const onLog = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      log(text);
      if (!ready) {
        output += text;
        if (output.includes(READY_LINE)) {
          ready = true;
          output = '';
          clearTimeout(timer);
          resolveStart();
        }
      }
    };
    child.stdout?.on('data', onLog);
    child.stderr?.on('data', onLog);
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(spawnFailure('start', error, binaries.postgres));
    });
    child.once('exit', (code) => {
      if (!ready) {
        clearTimeout(timer);
        reject(
          new EmbeddedPostgresError(
            `The embedded PostgreSQL stopped while starting (exit ${code}: ${output.trim().split('\n').slice(-3).join(' ')}): set DATABASE_URL to use an existing server instead.`,
          ),
        );
      }
    });
  });
  return child;
}

/** How long a stopping server waits for its sessions to end before it ends them. */
const SMART_SHUTDOWN_MS = 3000;

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  // SIGTERM is PostgreSQL's smart shutdown: it waits for open sessions to end. A closed pg pool reports
  // itself ended as soon as it has sent each connection's Terminate, before the server has read it; a fast
  // shutdown at that moment would end those sessions with an error (57P01) that the pool logs. Sessions
  // still open after SMART_SHUTDOWN_MS are cut by the fast shutdown (SIGINT); either way the data is
  // flushed and the pid file removed.
  child.kill('SIGTERM');
  const fast = setTimeout(() => child.kill('SIGINT'), SMART_SHUTDOWN_MS);
  try {
    await exited;
  } finally {
    clearTimeout(fast);
  }
}

/**
 * Starts a real PostgreSQL from the binaries of the embedded-postgres package with its data under
 * `dataDir` (kept across restarts), on a free loopback port, and creates `database` if missing.
 * As root the server runs as the `postgres` user (created if missing); when that user cannot reach the
 * checkout, the binaries are copied and the data kept where it can (embeddedDataLocation).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  database: string,
  log: (line: string) => void = () => undefined,
): Promise<EmbeddedDatabase> {
  const account = runningAsRoot() ? ensurePostgresAccount() : undefined;
  const binaries = await runnableBinaries(account);
  const location = embeddedDataLocation(dataDir);
  const dir = resolve(location.path);
  if (location.relocated) {
    makeShared(dirname(dir));
  }
  mkdirSync(dir, { recursive: true });
  if (account) {
    chownSync(dir, account.uid, account.gid);
  }
  const locale = messagesLocale();
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    await initialise(binaries, dir, account, locale, log);
  }
  removeStalePidFile(dir);
  const port = await freePort();
  const server = await startServer(binaries, dir, port, account, locale, log);
  // If this process ends without stop() (an uncaught error), the server is not left running.
  const onExit = (): void => {
    server.kill('SIGINT');
  };
  process.once('exit', onExit);
  const stop = async (): Promise<void> => {
    process.removeListener('exit', onExit);
    await stopServer(server);
  };
  try {
    const admin = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'postgres',
      password: PASSWORD,
      database: 'postgres',
    });
    await admin.connect();
    try {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (found.rowCount === 0) {
        await admin.query(`CREATE DATABASE "${database.replace(/"/g, '')}"`);
      }
    } finally {
      await admin.end();
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`,
    dataDir: location.relocated ? dir : dataDir,
    relocated: location.relocated,
    stop,
  };
}
