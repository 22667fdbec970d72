import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { dataSourceOptions } from './data-source-options.js';
import { TransactionHost } from './transaction-host.js';

/**
 * Connects to PostgreSQL. By the time Nest builds this module, config.database.url is set: either given by
 * DATABASE_URL or filled in by main.ts / the test setup after starting the embedded server.
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
        return {
          ...dataSourceOptions(config, config.database.url),
          migrationsRun: config.database.runMigrations,
          migrationsTransactionMode: 'each' as const,
          autoLoadEntities: true,
          logging: ['error'] as const,
        };
      },
    }),
  ],
  providers: [TransactionHost],
  exports: [TransactionHost],
})
export class DatabaseModule {}
