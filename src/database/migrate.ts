import type { DataSource, Migration } from 'typeorm';

/** Key of the PostgreSQL advisory lock held while migrations run (any constant; shared by all instances). */
const MIGRATION_LOCK_KEY = 774_142_001;

/**
 * Runs the pending migrations, each in its own transaction, while holding a session-level advisory lock:
 * several instances starting at once against one database apply every migration exactly once (the others
 * wait, then find nothing pending). TypeORM itself takes no such lock.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<Migration[]> {
  return withMigrationLock(dataSource, () => dataSource.runMigrations({ transaction: 'each' }));
}

/** Reverts the last applied migration under the same lock. */
export async function revertLastMigration(dataSource: DataSource): Promise<void> {
  await withMigrationLock(dataSource, () => dataSource.undoLastMigration({ transaction: 'each' }));
}

async function withMigrationLock<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const lockRunner = dataSource.createQueryRunner();
  await lockRunner.connect();
  try {
    await lockRunner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      return await work();
    } finally {
      await lockRunner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await lockRunner.release();
  }
}

export interface MigrationStatus {
  name: string;
  applied: boolean;
}

/** Every known migration with whether it has been applied, in order. */
export async function migrationStatus(dataSource: DataSource): Promise<MigrationStatus[]> {
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  const exists = await dataSource.query<Array<{ found: string | null }>>('SELECT to_regclass($1) AS found', [
    table,
  ]);
  const applied = new Set<string>();
  if (exists[0]?.found) {
    const rows = await dataSource.query<Array<{ name: string }>>(`SELECT name FROM "${table}"`);
    rows.forEach((row) => applied.add(row.name));
  }
  return dataSource.migrations.map((migration) => ({
    name: migration.name ?? migration.constructor.name,
    applied: applied.has(migration.name ?? migration.constructor.name),
  }));
}
