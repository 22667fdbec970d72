import type { DataSourceOptions } from 'typeorm';
import { ALL_MIGRATIONS } from '../../migrations/all-migrations.js';
import type { AppConfig } from '../config/app.config.js';
import { PreparingClient } from './prepared-statements.js';
import { SnakeNamingStrategy } from './snake-naming.strategy.js';

/**
 * The one description of the connection, shared by the application and the migration CLI.
 * `synchronize` is never on: the schema changes only through migrations.
 */
export function dataSourceOptions(config: AppConfig, url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    synchronize: false,
    migrationsRun: false,
    migrations: ALL_MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    namingStrategy: new SnakeNamingStrategy(),
    applicationName: 'quire',
    extra: {
      max: config.database.poolSize,
      statement_timeout: config.database.statementTimeoutMs || undefined,
      idle_in_transaction_session_timeout: 60_000,
      // Statements marked with prepared() are parsed once per connection (docs/performance.md).
      Client: PreparingClient,
    },
  };
}
