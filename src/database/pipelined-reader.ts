import pg from 'pg';
import { PreparingClient } from './prepared-statements.js';

/**
 * One connection in `pg`'s pipeline mode for the hot keyed reads made outside any transaction (the access check of
 * every document request, TransactionHost.select). The reads of all requests that arrive in one turn of the event
 * loop leave in one socket write (flushed by `setImmediate`) and PostgreSQL answers them in order on one backend:
 * on this kind of virtual machine a loopback write that wakes PostgreSQL costs about 0.1 ms of CPU, as much as the
 * rest of the read (docs/performance.md, "Eighth pass"). A pooled connection per read would pay it per read.
 *
 * Only for short keyed lookups: one slow statement would hold up the reads queued behind it. A broken connection
 * fails the reads in flight on it (as it would on a pooled one) and the next read opens a new one.
 */
export class PipelinedReader {
  private client: Promise<PreparingClient> | null = null;
  private closed = false;

  constructor(private readonly config: pg.ClientConfig) {}

  /** The rows of `sql`; a read whose connection broke is sent once more on a new one (reads repeat safely). */
  async query<T>(sql: string, params: unknown[]): Promise<T[]> {
    try {
      return await this.once<T>(sql, params);
    } catch (error) {
      if (!connectionLost(error)) {
        throw error;
      }
      return this.once<T>(sql, params);
    }
  }

  private async once<T>(sql: string, params: unknown[]): Promise<T[]> {
    const opened = this.connection();
    const client = await opened;
    try {
      const result = await (client as unknown as pg.Client).query(sql, params);
      return result.rows as T[];
    } catch (error) {
      if (connectionLost(error) && this.client === opened) {
        this.client = null;
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    if (client) {
      await client.then((open) => open.end()).catch(() => undefined);
    }
  }

  private connection(): Promise<PreparingClient> {
    if (this.closed) {
      return Promise.reject(new Error('the pipelined reader is closed'));
    }
    if (!this.client) {
      const client = new PreparingClient(
        {
          ...this.config,
          application_name: `${this.config.application_name ?? 'quire'}-reads`,
          pipeline: true,
        } as pg.ClientConfig,
        setImmediate,
      );
      const opened = client.connect().then(() => client);
      const forget = (): void => {
        if (this.client === opened) {
          this.client = null;
        }
      };
      client.on('error', forget);
      client.on('end', forget);
      // A failed connect is forgotten too, so the next read tries again.
      opened.catch(forget);
      this.client = opened;
    }
    return this.client;
  }
}

/**
 * Whether a read failed because its connection did, not because of the statement: a socket error, or PostgreSQL
 * ending the session (SQLSTATE class 08, connection exception, or 57P, operator intervention).
 */
function connectionLost(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) {
    return error.code?.startsWith('08') === true || error.code?.startsWith('57P') === true;
  }
  return error instanceof Error;
}
