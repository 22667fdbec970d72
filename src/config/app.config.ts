import { readBool, readEnum, readInt, readList, readString, readUrl } from './env.js';
import { loadRealtimeConfig, type RealtimeConfig } from './realtime.config.js';
import { loadWebhooksConfig, type WebhooksConfig } from './webhooks.config.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface AppConfig {
  nodeEnv: string;
  port: number;
  host: string;
  publicBaseUrl: string;
  /** `{auth_url}`: the issuer of access tokens; defaults to the public base URL. */
  authIssuerUrl: string;
  logLevel: (typeof LOG_LEVELS)[number];
  bodyLimitBytes: number;
  corsOrigins: string[];
  /** Express `trust proxy`: which hops may set X-Forwarded-For (the rate limit counts per client address). */
  trustProxy: boolean | number | string;
  database: {
    /** Unset: an embedded PostgreSQL is started under dataDir. */
    url?: string;
    poolSize: number;
    statementTimeoutMs: number;
    runMigrations: boolean;
    dataDir: string;
  };
  redisUrl?: string;
  rateLimit: { perMinute: number; windowMs: number };
  /** Totals of row lists (docs/performance.md, "Count modes"): exact up to this many rows in the document, else estimated. */
  query: { exactCountMaxRows: number };
  /** How long verified credentials, sessions and access rights are reused before being read again (docs/auth.md). */
  authCache: { ttlMs: number; maxEntries: number };
  outbox: { pollIntervalMs: number; batchSize: number; maxAttempts: number };
  /** Event streams, sockets, presence, locks and Yjs state (realtime.config.ts, docs/realtime.md). */
  realtime: RealtimeConfig;
  auth: {
    accessTokenTtlSeconds: number;
    refreshTokenTtlSeconds: number;
    /**
     * How long after a refresh token was rotated presenting it again still answers its successor instead of
     * revoking the session (clients refreshing from several requests at once; docs/auth.md). 0 turns it off.
     */
    refreshTokenReuseGraceSeconds: number;
    adminEmails: string[];
    /** Secret for encrypting stored third-party client secrets; generated and persisted when unset. */
    encryptionKey?: string;
  };
  smtpUrl?: string;
  mailFrom: string;
  /** E-mail goes out from the `notifications` table, retried with back-off (docs/decisions/mail-delivery.md). */
  mailDelivery: { pollIntervalMs: number; retryBaseMs: number; maxAttempts: number };
  /** Outgoing webhooks (src/config/webhooks.config.ts, docs/webhooks.md). */
  webhooks: WebhooksConfig;
}

/** `true`/`false`, a hop count, or Express's names and CIDR lists (`loopback, uniquelocal, 10.0.0.0/8`). */
function trustProxyOf(raw: string): boolean | number | string {
  if (raw === 'true' || raw === 'false') {
    return raw === 'true';
  }
  return /^\d+$/.test(raw) ? Number(raw) : raw;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const port = readInt(env, 'PORT', 3000, 0, 65535);
  const publicBaseUrl = readUrl(env, 'PUBLIC_BASE_URL', ['http', 'https']) ?? `http://localhost:${port}`;
  const nodeEnv = readString(env, 'NODE_ENV', 'development') ?? 'development';
  return {
    nodeEnv,
    port,
    host: readString(env, 'HOST', '0.0.0.0') ?? '0.0.0.0',
    publicBaseUrl,
    authIssuerUrl: readUrl(env, 'AUTH_ISSUER_URL', ['http', 'https']) ?? publicBaseUrl,
    logLevel: readEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    bodyLimitBytes: readInt(env, 'BODY_LIMIT_BYTES', 5 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    corsOrigins: readList(env, 'CORS_ORIGINS'),
    trustProxy: trustProxyOf(readString(env, 'TRUST_PROXY', 'loopback') ?? 'loopback'),
    database: {
      url: readUrl(env, 'DATABASE_URL', ['postgres', 'postgresql']),
      poolSize: readInt(env, 'DB_POOL_SIZE', 10, 1, 200),
      statementTimeoutMs: readInt(env, 'DB_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
      runMigrations: readBool(env, 'DB_RUN_MIGRATIONS', true),
      dataDir: readString(env, 'DATA_DIR', '.data') ?? '.data',
    },
    redisUrl: readUrl(env, 'REDIS_URL', ['redis', 'rediss']),
    rateLimit: {
      perMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 100, 1, 1_000_000),
      windowMs: readInt(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1000, 3_600_000),
    },
    query: {
      exactCountMaxRows: readInt(env, 'QUERY_EXACT_COUNT_MAX_ROWS', 10_000, 0, 100_000_000),
    },
    authCache: {
      ttlMs: readInt(env, 'AUTH_CACHE_TTL_MS', 5000, 0, 60_000),
      maxEntries: readInt(env, 'AUTH_CACHE_MAX_ENTRIES', 10_000, 1, 1_000_000),
    },
    outbox: {
      pollIntervalMs: readInt(env, 'OUTBOX_POLL_INTERVAL_MS', 2000, 50, 600_000),
      batchSize: readInt(env, 'OUTBOX_BATCH_SIZE', 100, 1, 10_000),
      maxAttempts: readInt(env, 'OUTBOX_MAX_ATTEMPTS', 10, 1, 1000),
    },
    realtime: loadRealtimeConfig(env),
    auth: {
      accessTokenTtlSeconds: readInt(env, 'ACCESS_TOKEN_TTL_SECONDS', 3600, 60, 86_400),
      refreshTokenTtlSeconds: readInt(env, 'REFRESH_TOKEN_TTL_SECONDS', 30 * 86_400, 300, 365 * 86_400),
      refreshTokenReuseGraceSeconds: readInt(env, 'REFRESH_TOKEN_REUSE_GRACE_SECONDS', 5, 0, 60),
      adminEmails: readList(env, 'ADMIN_EMAILS').map((email) => email.toLowerCase()),
      encryptionKey: readString(env, 'ENCRYPTION_KEY'),
    },
    smtpUrl: readUrl(env, 'SMTP_URL', ['smtp', 'smtps']),
    mailFrom: readString(env, 'MAIL_FROM', 'Quire <no-reply@quire.local>') ?? 'Quire <no-reply@quire.local>',
    mailDelivery: {
      pollIntervalMs: readInt(env, 'MAIL_POLL_INTERVAL_MS', 2000, 50, 600_000),
      retryBaseMs: readInt(env, 'MAIL_RETRY_BASE_MS', 2000, 10, 3_600_000),
      maxAttempts: readInt(env, 'MAIL_MAX_ATTEMPTS', 30, 1, 1000),
    },
    webhooks: loadWebhooksConfig(env, nodeEnv),
  };
}

/** Injection token of the parsed configuration. */
export const APP_CONFIG = Symbol('APP_CONFIG');
