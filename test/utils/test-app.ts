import 'reflect-metadata';
import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { App } from 'supertest/types.js';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/app.setup.js';
import { type AppConfig, loadConfig } from '../../src/config/app.config.js';
import { createTestDatabase } from './test-database.js';

export interface TestApp {
  app: NestExpressApplication;
  http: App;
  config: AppConfig;
  dataSource: DataSource;
  openApi: OpenAPIObject;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Test-only modules (controllers, subscribers) mounted next to AppModule. */
  extraModules?: Array<Type<unknown> | DynamicModule>;
  /**
   * Boot on this database instead of a fresh one (for two instances sharing one database). The caller
   * created it (createTestDatabase) and drops it; close() leaves it alone.
   */
  databaseUrl?: string;
}

/** Wraps AppModule so a test can add modules without touching the production module tree. */
@Module({})
class TestRootModule {}

/**
 * Boots the real application exactly as main.ts does (same module, same configureApp) on a database of
 * its own. `env` overrides configuration the way environment variables would.
 */
export async function createTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const database = options.databaseUrl
    ? { url: options.databaseUrl, drop: async () => undefined }
    : await createTestDatabase();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '100000',
    DB_RUN_MIGRATIONS: 'false',
    OUTBOX_POLL_INTERVAL_MS: '200',
    PUBLIC_BASE_URL: 'http://127.0.0.1',
    ...env,
    DATABASE_URL: database.url,
  });
  const extra = options.extraModules ?? [];
  const root: DynamicModule | Type<unknown> =
    extra.length > 0
      ? { module: TestRootModule, imports: [AppModule.forRoot(config), ...extra] }
      : AppModule.forRoot(config);
  const app = await NestFactory.create<NestExpressApplication>(root, { bodyParser: false, logger: false });
  const openApi = configureApp(app, config);
  await app.init();
  return {
    app,
    http: app.getHttpServer() as App,
    config,
    dataSource: app.get(DataSource),
    openApi,
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}
