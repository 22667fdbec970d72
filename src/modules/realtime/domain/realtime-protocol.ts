/**
 * Wire constants of the realtime surface (docs/realtime.md): WebSocket close codes, event-stream event names,
 * and the bus channel. Clients code against these values; change them only with a new API version.
 */

/** WebSocket close codes (4000–4999 is the range RFC 6455 leaves to applications). */
export const CLOSE_CODES = {
  /** The first message was not a well-formed `auth` message (or was over REALTIME_MAX_MESSAGE_BYTES). */
  BAD_HANDSHAKE: 4400,
  /** The token in `auth` was missing, invalid, expired, or for another document. */
  UNAUTHENTICATED: 4401,
  /** Read access to the document was lost (member removed, key revoked, token expired, document gone). */
  ACCESS_LOST: 4403,
  /** No `auth` message within REALTIME_AUTH_TIMEOUT_MS. */
  AUTH_TIMEOUT: 4408,
  /** A document manager called disconnect-all. */
  DISCONNECTED_BY_MANAGER: 4410,
  /** Too many connections for the user or the instance, or the message rate stayed over the limit. */
  TOO_MANY: 4429,
  /** The client did not read fast enough; its queue went over REALTIME_MAX_BUFFERED_BYTES. */
  SLOW_CONSUMER: 4503,
  /** The instance is shutting down; reconnect (another instance will take the socket). */
  GOING_AWAY: 1001,
  /** The server failed (a database error while admitting the socket): RFC 6455's internal error, not the client's doing. */
  INTERNAL_ERROR: 1011,
} as const;

export type CloseReason = keyof typeof CLOSE_CODES;

/** `event:` names of the stream's control events; domain events use their catalogue name (spec 6.2). */
export const STREAM_EVENTS = {
  /** `Last-Event-ID` is older than the retention window: some events are gone; re-read the document. */
  RESYNC_REQUIRED: 'resync_required',
  /** The server is ending the stream; `data.reason` is one of CloseReason. */
  STREAM_END: 'stream_end',
} as const;

/** The PostgreSQL NOTIFY channel / Redis pub-sub channel every instance listens on. */
export const BUS_CHANNEL = 'quire_realtime';

/** The WebSocket endpoint; the document is named by the connect token or the query of `wsUrl`. */
export const WS_PATH = '/realtime/ws';

/** Sub-protocol names offered in /connect (`protocols`); a client may also connect without one. */
export const WS_PROTOCOLS = ['quire.realtime.v1'] as const;
