import type { DataSource, QueryRunner } from 'typeorm';

/**
 * Forcing an interleaving in a race test: hold row locks from a connection of the test's own, let the requests
 * queue behind them, then release.
 */

/** Opens a transaction holding `sql`'s row locks until release(). */
export async function holdLock(dataSource: DataSource, sql: string, params: unknown[]): Promise<{ release(): Promise<void> }> {
  const runner: QueryRunner = dataSource.createQueryRunner();
  await runner.connect();
  await runner.startTransaction();
  await runner.query(sql, params);
  return {
    release: async () => {
      await runner.commitTransaction();
      await runner.release();
    },
  };
}

/** Resolves once `count` sessions of this test database wait for a lock, or `done` says to stop waiting. */
export async function blockedSessions(dataSource: DataSource, count: number, done: () => boolean = () => false): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) {
    const [row] = await dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (row.n >= count) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
