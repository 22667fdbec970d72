import 'reflect-metadata';
import type { Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { type AppConfig, loadConfig } from './config/app.config.js';
import { ConfigError } from './config/env.js';
import {
  EmbeddedPostgresError,
  startEmbeddedPostgres,
  type EmbeddedDatabase,
} from './database/embedded-postgres.js';

/** How long in-flight requests may take to finish after SIGTERM before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

function configOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** The database URL without its password, for the start-up banner. */
function describeUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) {
    parsed.password = '***';
  }
  return parsed.toString();
}

async function bootstrap(): Promise<void> {
  const config = configOrExit();
  let embedded: EmbeddedDatabase | undefined;
  if (!config.database.url) {
    embedded = await startEmbeddedPostgres(`${config.database.dataDir}/pg`, 'quire');
    config.database.url = embedded.url;
  }
  let app: NestExpressApplication;
  try {
    app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
      bufferLogs: true,
      bodyParser: false,
    });
    configureApp(app, config);
    await app.listen(config.port, config.host);
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  const server = app.getHttpServer() as Server;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  // With PORT=0 (tests, benchmarks) the default base URL names port 0; show the one the kernel chose.
  const base = config.port === 0 ? config.publicBaseUrl.replace(/:0$/, `:${port}`) : config.publicBaseUrl;
  const database = embedded
    ? `embedded PostgreSQL (data in ${embedded.dataDir}${
        embedded.relocated ? `: the postgres user it runs as cannot reach ${config.database.dataDir}/pg` : ''
      })`
    : `DATABASE_URL ${describeUrl(config.database.url)}`;
  process.stdout.write(
    `Quire listening on port ${port}\n  API:        ${base}/api/v1\n  Swagger UI: ${base}/api/docs\n  OpenAPI:    ${base}/api/docs-json\n  Database:   ${database}\n`,
  );

  // Graceful shutdown: stop accepting, let in-flight requests finish (cut them after DRAIN_TIMEOUT_MS),
  // stop the outbox dispatcher, close Redis and the pool (Nest's shutdown hooks), then the embedded server.
  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) {
      return;
    }
    closing = true;
    process.stdout.write(`${signal} received: draining requests and shutting down\n`);
    server.closeIdleConnections();
    const force = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
    force.unref();
    let code = 0;
    try {
      await app.close();
    } catch (error) {
      process.stderr.write(`shutdown failed: ${error instanceof Error ? error.message : String(error)}\n`);
      code = 1;
    }
    try {
      await embedded?.stop();
    } catch (error) {
      process.stderr.write(
        `stopping the embedded database failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      code = 1;
    }
    process.stdout.write('stopped\n');
    process.exit(code);
  };
  // This process owns shutdown: any other SIGTERM/SIGINT hook (such as the async-exit-hook the embedded-postgres
  // library used to install, which stopped the database at once and exited 143) would race the drain below.
  // Drop them and stop the database last.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

bootstrap().catch((error: unknown) => {
  // An embedded database that cannot start says what to do in one sentence; its stack would bury that.
  const detail =
    error instanceof EmbeddedPostgresError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`Start-up failed: ${detail}\n`);
  process.exit(1);
});
