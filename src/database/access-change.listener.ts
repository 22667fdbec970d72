import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import { DataSource, type EntitySubscriberInterface, type InsertEvent, type RemoveEvent, type UpdateEvent } from 'typeorm';
import { TtlCache } from '../common/cache/ttl-cache.js';
import { APP_CONFIG, type AppConfig } from '../config/app.config.js';
import { TransactionHost } from './transaction-host.js';

export const ACCESS_CHANGED_CHANNEL = 'quire_access_changed';
const RECONNECT_MS = 1000;
/** Tables whose changes can take a right away; the triggers of migration 1732240450000 watch the same ones. */
const ACCESS_TABLES = new Set([
  'organizations',
  'organization_members',
  'workspaces',
  'workspace_members',
  'data_source_references',
  'sessions',
  'api_keys',
  'oauth_clients',
]);

/**
 * The caches of verified sessions and access rights (docs/auth.md, "Caches"). Entries live at most
 * AUTH_CACHE_TTL_MS; on top of that, triggers NOTIFY `quire_access_changed` when a membership, role, status,
 * reference, session, key or client changes (migration 1732240450000), and this listener — one connection per
 * instance — clears every cache the moment such a change commits, on every instance. If the connection is lost,
 * the caches are cleared and not used until it is back (the TTL alone then bounds staleness).
 * Reads inside a transaction never use the caches: a write path sees its own changes. The instance that makes
 * a change also clears its caches itself right after the commit (entity writes through TypeORM are seen by the
 * subscriber below; raw-SQL revocations call `changed()`), so its own next request never sees a stale right.
 */
@Injectable()
export class AccessChangeListener implements OnModuleInit, OnApplicationShutdown, EntitySubscriberInterface {
  private readonly logger = new Logger(AccessChangeListener.name);
  private readonly caches = new Set<TtlCache<unknown, unknown>>();
  private client?: pg.Client;
  private listening = false;
  private stopped = false;
  private reconnectTimer?: NodeJS.Timeout;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tx: TransactionHost,
    private readonly dataSource: DataSource,
  ) {}

  /** A raw-SQL change to one of the access tables: clear this instance's caches once it commits. */
  changed(): void {
    this.tx.afterCommit(() => this.clearAll());
  }

  afterInsert(event: InsertEvent<unknown>): void {
    this.entityChanged(event.metadata.tableName);
  }

  afterUpdate(event: UpdateEvent<unknown>): void {
    this.entityChanged(event.metadata.tableName);
  }

  afterRemove(event: RemoveEvent<unknown>): void {
    this.entityChanged(event.metadata.tableName);
  }

  private entityChanged(table: string): void {
    if (ACCESS_TABLES.has(table)) {
      this.changed();
    }
  }

  /** A cache cleared on every access change; unused (always missing) while the listener is not connected. */
  createCache<K, V>(): TtlCache<K, V> {
    const cache = new TtlCache<K, V>(this.config.authCache.ttlMs, this.config.authCache.maxEntries);
    this.caches.add(cache as TtlCache<unknown, unknown>);
    return cache;
  }

  /** Whether cached values may be used now. */
  get active(): boolean {
    return this.listening && this.config.authCache.ttlMs > 0;
  }

  /** Drops every cached session and right (also called by tests and after local revocations). */
  clearAll(): void {
    for (const cache of this.caches) {
      cache.clear();
    }
  }

  async onModuleInit(): Promise<void> {
    this.dataSource.subscribers.push(this);
    if (this.config.authCache.ttlMs > 0) {
      await this.connect();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped || !this.config.database.url) {
      return;
    }
    const client = new pg.Client({ connectionString: this.config.database.url, application_name: 'quire-access-listener' });
    client.on('notification', () => this.clearAll());
    client.on('error', (error: Error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${ACCESS_CHANGED_CHANNEL}`);
      this.client = client;
      this.clearAll();
      this.listening = true;
    } catch (error) {
      this.lost(client, error instanceof Error ? error : new Error(String(error)));
    }
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== undefined && this.client !== client) {
      return;
    }
    this.listening = false;
    this.clearAll();
    this.client = undefined;
    client.removeAllListeners();
    void client.end().catch(() => undefined);
    if (this.stopped) {
      return;
    }
    if (error) {
      this.logger.warn(`access-change listener lost its connection (${error.message}); caches off until it is back`);
    }
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.reconnectTimer.unref();
  }
}
