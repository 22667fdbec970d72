import { readInt } from './env.js';

type Env = Record<string, string | undefined>;

/** Realtime streams and sessions (docs/realtime.md); every bound here is per instance unless stated. */
export interface RealtimeConfig {
  /** Lifetime of the `token` that /connect returns (used to open a stream or a socket, not to keep one). */
  connectTokenTtlSeconds: number;
  /** How far back `Last-Event-ID` can resume the event stream. */
  streamRetentionSeconds: number;
  /** Interval of `: heartbeat` comments on event streams and pings on sockets. */
  heartbeatMs: number;
  /** The `retry:` hint sent to event-stream clients. */
  sseRetryMs: number;
  /** How often open streams and sessions re-check their credential and document access (the bound on access loss). */
  accessRecheckMs: number;
  /** Time a socket has to send its `auth` message. */
  authTimeoutMs: number;
  /** Largest accepted socket message (bytes). */
  maxMessageBytes: number;
  /** Messages per second a socket may send (a burst of twice that is tolerated). */
  maxMessagesPerSecond: number;
  /** Open streams plus sockets per user, per instance. */
  maxConnectionsPerUser: number;
  /** Open streams plus sockets per instance. */
  maxConnections: number;
  /** Bytes queued for a client before it is dropped as a slow consumer. */
  maxBufferedBytes: number;
  /** Yjs updates kept before they are compacted into the document's state. */
  yjsCompactAfterUpdates: number;
  /** Default and largest lock lifetime. */
  lockDefaultTtlSeconds: number;
  lockMaxTtlSeconds: number;
}

export function loadRealtimeConfig(env: Env): RealtimeConfig {
  return {
    connectTokenTtlSeconds: readInt(env, 'REALTIME_CONNECT_TOKEN_TTL_SECONDS', 300, 10, 3600),
    streamRetentionSeconds: readInt(env, 'REALTIME_STREAM_RETENTION_SECONDS', 86_400, 1, 30 * 86_400),
    heartbeatMs: readInt(env, 'REALTIME_HEARTBEAT_MS', 15_000, 100, 300_000),
    sseRetryMs: readInt(env, 'REALTIME_SSE_RETRY_MS', 3000, 50, 600_000),
    accessRecheckMs: readInt(env, 'REALTIME_ACCESS_RECHECK_MS', 30_000, 100, 600_000),
    authTimeoutMs: readInt(env, 'REALTIME_AUTH_TIMEOUT_MS', 5000, 100, 60_000),
    maxMessageBytes: readInt(env, 'REALTIME_MAX_MESSAGE_BYTES', 256 * 1024, 1024, 1024 * 1024),
    maxMessagesPerSecond: readInt(env, 'REALTIME_MAX_MESSAGES_PER_SECOND', 50, 1, 10_000),
    maxConnectionsPerUser: readInt(env, 'REALTIME_MAX_CONNECTIONS_PER_USER', 20, 1, 100_000),
    maxConnections: readInt(env, 'REALTIME_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    maxBufferedBytes: readInt(env, 'REALTIME_MAX_BUFFERED_BYTES', 1024 * 1024, 1024, 256 * 1024 * 1024),
    yjsCompactAfterUpdates: readInt(env, 'REALTIME_YJS_COMPACT_AFTER_UPDATES', 200, 2, 100_000),
    lockDefaultTtlSeconds: readInt(env, 'REALTIME_LOCK_DEFAULT_TTL_SECONDS', 60, 1, 86_400),
    lockMaxTtlSeconds: readInt(env, 'REALTIME_LOCK_MAX_TTL_SECONDS', 3600, 1, 86_400),
  };
}
