import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import pg from 'pg';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { BUS_CHANNEL } from '../domain/realtime-protocol.js';
import { prepared } from '../../../database/prepared-statements.js';

/** What instances tell each other. Kept small: PostgreSQL NOTIFY payloads are limited to 8000 bytes. */
export type BusMessage =
  | { t: 'event'; org: string | null; ws: string | null; dt: string; di: string; seq: string }
  | { t: 'yjs'; doc: string; from: string; id: string; u?: string }
  | { t: 'awareness'; doc: string; from: string; u: string }
  | { t: 'presence'; doc: string; action: 'joined' | 'left'; sessionId: string; userId: string }
  | { t: 'lock'; doc: string; action: 'acquired' | 'released'; lock: Record<string, unknown> }
  | { t: 'disconnect'; doc: string };

/** Largest message the bus carries; callers send a reference instead of a larger body. */
export const BUS_MAX_BYTES = 7500;

type Handler = (message: BusMessage, fromThisInstance: boolean) => void;

/**
 * Fan-out between service instances: PostgreSQL LISTEN/NOTIFY by default, Redis pub/sub when REDIS_URL is set.
 * Every instance, this one included, receives every message. With PostgreSQL, a message published inside a
 * transaction is delivered only if and when it commits (NOTIFY is transactional); with Redis it is published
 * after commit. A listener that loses its connection reconnects and calls the `onReconnect` hooks, so
 * subscribers can re-read what they may have missed.
 */
@Injectable()
export class RealtimeBus implements OnModuleInit, OnApplicationShutdown {
  readonly instanceId = randomUUID();
  private readonly logger = new Logger(RealtimeBus.name);
  private readonly handlers: Handler[] = [];
  private readonly reconnectHooks: Array<() => void> = [];
  private listener?: pg.Client;
  private redisSub?: Redis;
  private redisPub?: Redis;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;

  constructor(
    private readonly tx: TransactionHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.redisUrl) {
      this.redisPub = new Redis(this.config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 });
      this.redisSub = new Redis(this.config.redisUrl, { lazyConnect: false });
      this.redisPub.on('error', (error: Error) =>
        this.logger.warn({ err: error }, 'realtime redis publisher error'),
      );
      this.redisSub.on('error', (error: Error) =>
        this.logger.warn({ err: error }, 'realtime redis subscriber error'),
      );
      this.redisSub.on('message', (_channel: string, raw: string) => this.receive(raw));
      this.redisSub.on('ready', () => this.reconnectHooks.forEach((hook) => hook()));
      // Never wait for Redis at start-up: an unreachable Redis must not stop the service (the rate limit fails
      // open the same way). ioredis queues the subscription and replays it on every reconnect.
      this.redisSub.subscribe(BUS_CHANNEL).catch((error: unknown) => this.logger.warn({ err: error }, 'realtime redis subscribe failed; retried on reconnect'));
      return;
    }
    await this.listen();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.listener?.end().catch(() => undefined);
    this.redisSub?.disconnect();
    this.redisPub?.disconnect();
  }

  subscribe(handler: Handler): void {
    this.handlers.push(handler);
  }

  onReconnect(hook: () => void): void {
    this.reconnectHooks.push(hook);
  }

  /**
   * Publishes to every instance. Inside a transaction: delivered after commit (never on rollback). The caller
   * keeps messages under BUS_MAX_BYTES.
   */
  async publish(message: BusMessage): Promise<void> {
    const raw = JSON.stringify({ ...message, i: this.instanceId });
    if (Buffer.byteLength(raw) > BUS_MAX_BYTES) {
      throw new Error(`realtime bus message too large (${Buffer.byteLength(raw)} bytes)`);
    }
    if (this.redisPub) {
      const publisher = this.redisPub;
      this.tx.afterCommit(() => {
        publisher
          .publish(BUS_CHANNEL, raw)
          .catch((error: unknown) => this.logger.warn({ err: error }, 'realtime publish failed'));
      });
      return;
    }
    await this.tx.manager.query(prepared('SELECT pg_notify($1, $2)'), [BUS_CHANNEL, raw]);
  }

  private receive(raw: string): void {
    let parsed: BusMessage & { i?: string };
    try {
      parsed = JSON.parse(raw) as BusMessage & { i?: string };
    } catch {
      return;
    }
    const local = parsed.i === this.instanceId;
    for (const handler of this.handlers) {
      try {
        handler(parsed, local);
      } catch (error) {
        this.logger.error({ err: error }, 'realtime bus handler failed');
      }
    }
  }

  /** A dedicated connection (outside the pool: LISTEN holds it for the life of the instance). */
  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.config.database.url });
    client.on('notification', (notification) => {
      if (notification.channel === BUS_CHANNEL && notification.payload) {
        this.receive(notification.payload);
      }
    });
    client.on('error', (error) => {
      this.logger.warn({ err: error }, 'realtime listener connection lost; reconnecting');
      this.scheduleReconnect(client);
    });
    client.on('end', () => this.scheduleReconnect(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${BUS_CHANNEL}`);
      this.listener = client;
    } catch (error) {
      this.logger.warn({ err: error }, 'realtime listener could not connect; retrying');
      this.scheduleReconnect(client);
      return;
    }
  }

  private scheduleReconnect(client: pg.Client): void {
    if (this.stopped || (this.listener && this.listener !== client) || this.retryTimer) {
      return;
    }
    this.listener = undefined;
    client.removeAllListeners();
    client.on('error', () => undefined);
    client.end().catch(() => undefined);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.listen().then(() => {
        if (this.listener) {
          this.reconnectHooks.forEach((hook) => hook());
        }
      });
    }, 1000);
    this.retryTimer.unref();
  }
}
