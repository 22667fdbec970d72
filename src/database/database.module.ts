import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { AccessChangeListener } from './access-change.listener.js';
import { dataSourceOptions } from './data-source-options.js';
import { runMigrationsLocked } from './migrate.js';
import { installTimestampParser } from './timestamp-parser.js';
import { TransactionHost } from './transaction-host.js';
import { SLOW_QUERY_MS, TypeOrmLogger } from './typeorm-logger.js';

/**
 * Connects to PostgreSQL. By the time Nest builds this module, config.database.url is set: either given by
 * DATABASE_URL or filled in by main.ts / the test setup after starting the embedded server.
 * With DB_RUN_MIGRATIONS (default on) pending migrations run right after connecting, before any other
 * provider can touch the schema, under an advisory lock so instances starting together do not race.
 */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        if (!config.database.url) {
          throw new Error('database url missing: start the embedded database before building the app');
        }
        installTimestampParser();
        return {
          ...dataSourceOptions(config, config.database.url),
          // Read by dataSourceFactory below, which runs them itself (under the lock) instead of TypeORM.
          migrationsRun: config.database.runMigrations,
          autoLoadEntities: true,
          logging: ['error', 'warn', 'migration'] as const,
          logger: new TypeOrmLogger(),
          maxQueryExecutionTime: SLOW_QUERY_MS,
        };
      },
      dataSourceFactory: async (options) => {
        if (!options) {
          throw new Error('TypeORM options missing');
        }
        const dataSource = await new DataSource({ ...options, migrationsRun: false }).initialize();
        if (options.migrationsRun) {
          await runMigrationsLocked(dataSource);
        }
        return dataSource;
      },
    }),
  ],
  providers: [TransactionHost, AccessChangeListener],
  exports: [TransactionHost, AccessChangeListener],
})
export class DatabaseModule {}
