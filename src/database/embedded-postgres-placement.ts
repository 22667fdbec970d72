import { execFileSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, parse, resolve } from 'node:path';

/**
 * Where the embedded PostgreSQL's binaries and data live, and which account runs them. PostgreSQL refuses to run
 * as root, so as root it runs as the `postgres` user; from a checkout that user cannot enter (under /root) the
 * binaries are copied and the data kept under a shared directory instead. The server's life (initdb, start, stop)
 * is in embedded-postgres.ts.
 */

/**
 * A failure to start the embedded server, worded as one sentence for the operator (what to do about it):
 * callers print the message, not a stack.
 */
export class EmbeddedPostgresError extends Error {}

export interface Account {
  uid: number;
  gid: number;
}

export interface Binaries {
  initdb: string;
  postgres: string;
}

export function runningAsRoot(): boolean {
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
export function ensurePostgresAccount(): Account {
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

export function makeShared(dir: string): void {
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
export async function runnableBinaries(account: Account | undefined): Promise<Binaries> {
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
