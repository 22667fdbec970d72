import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { loadConfig } from './config/app.config.js';
import { ConfigError } from './config/env.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded-postgres.js';

async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  let embedded: EmbeddedDatabase | undefined;
  if (!config.database.url) {
    embedded = await startEmbeddedPostgres(`${config.database.dataDir}/pg`, 'quire');
    config.database.url = embedded.url;
  }
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bufferLogs: true,
    bodyParser: false,
  });
  configureApp(app, config);
  await app.listen(config.port, config.host);
  const server = app.getHttpServer() as import('node:http').Server;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const base = config.publicBaseUrl;
  const database = embedded ? `embedded PostgreSQL (${config.database.dataDir}/pg)` : 'DATABASE_URL';
  process.stdout.write(
    `Quire listening on port ${port}\n  API:        ${base}/api/v1\n  Swagger UI: ${base}/api/docs\n  OpenAPI:    ${base}/api/docs-json\n  Database:   ${database}\n`,
  );

  let closing = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) {
      return;
    }
    closing = true;
    process.stdout.write(`${signal} received: draining requests and shutting down\n`);
    server.closeIdleConnections();
    const force = setTimeout(() => server.closeAllConnections(), 10_000);
    force.unref();
    await app.close();
    await embedded?.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

void bootstrap();
