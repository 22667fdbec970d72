import { Logger } from '@nestjs/common';
import type { Logger as TypeOrmLoggerInterface } from 'typeorm';

/** Statements slower than this are logged as warnings. */
export const SLOW_QUERY_MS = 1000;

/**
 * Sends TypeORM's messages to the application's logger (structured JSON through nestjs-pino) instead of
 * the console. A failed statement is logged at debug level only: most are expected (a unique violation the
 * exception filter turns into ALREADY_EXISTS) and the filter logs the unexpected ones with their stack.
 * Parameters are never logged: they can hold credentials.
 */
export class TypeOrmLogger implements TypeOrmLoggerInterface {
  private readonly logger = new Logger('TypeORM');

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    this.logger.debug({ query, error: error instanceof Error ? error.message : error }, 'query failed');
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn({ query, ms: time }, 'slow query');
  }

  logSchemaBuild(message: string): void {
    this.logger.debug(message);
  }

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') {
      this.logger.warn(String(message));
    } else {
      this.logger.log(String(message));
    }
  }
}
