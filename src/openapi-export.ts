import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { buildOpenApiDocument } from './app.setup.js';
import { loadConfig } from './config/app.config.js';

/**
 * Writes the OpenAPI document generated from the code to docs/openapi.json (`npm run openapi:export`), or
 * with --check fails when the committed file differs (CI). Builds the app without connecting anywhere.
 */
async function main(): Promise<void> {
  const config = loadConfig({
    PUBLIC_BASE_URL: 'http://localhost:3000',
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/none',
    LOG_LEVEL: 'silent',
  });
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    logger: false,
    preview: true,
    abortOnError: false,
  });
  app.setGlobalPrefix('api/v1', { exclude: (await import('./app.setup.js')).HOST_ROOT_ROUTES });
  const document = JSON.stringify(buildOpenApiDocument(app, config), null, 2) + '\n';
  const target = 'docs/openapi.json';
  if (process.argv.includes('--check')) {
    const committed = readFileSync(target, 'utf8');
    if (committed !== document) {
      process.stderr.write(`${target} is out of date: run npm run openapi:export and commit it\n`);
      process.exit(1);
    }
    process.stdout.write(`${target} is up to date\n`);
  } else {
    writeFileSync(target, document);
    process.stdout.write(`wrote ${target}\n`);
  }
  process.exit(0);
}

void main();
