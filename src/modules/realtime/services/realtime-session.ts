import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { messageOf } from '../../../common/i18n/error-messages.js';
import type { RealtimeConfig } from '../../../config/realtime.config.js';
import type { ServerKind } from '../domain/realtime-messages.js';
import { CLOSE_CODES, type CloseReason } from '../domain/realtime-protocol.js';
import { type EventPosition, type PositionedEvent, START_POSITION } from '../domain/event-position.js';
import type { DocRef, HubClient, StreamEvent } from '../domain/realtime.types.js';
import { encodeAwarenessFrame, encodeSync, fromBase64, SYNC_UPDATE } from '../domain/yjs-wire.js';
import type { RealtimeIdentity } from './realtime-auth.service.js';
import { errorDetailsOf } from '../../../common/http/envelope.js';

/** One serialization per event, however many sockets carry it. */
const framed = new WeakMap<StreamEvent, string>();

/** What a session needs from the services around it (kept narrow so the class stays transport-only). */
export interface SessionHooks {
  recheck(identity: RealtimeIdentity): Promise<boolean>;
  closed(session: RealtimeSession): void;
}

/**
 * One WebSocket after its `auth` message: the hub's view of it (events, pushes, heartbeats, close), the
 * per-connection message budget, and the slow-consumer bound. The socket's life (handshake, ordering, limits) lives
 * in RealtimeSessionService, what its messages do in RealtimeMessagesService.
 */
export class RealtimeSession implements HubClient {
  readonly sessionId = randomUUID();
  readonly transport = 'ws' as const;
  position: EventPosition = START_POSITION;
  skip = new Set<string>();
  live = false;
  pending: PositionedEvent[] = [];
  /** Speaks the binary y-protocols framing (switched on by its first binary frame). */
  binary = false;
  identity?: RealtimeIdentity;
  /**
   * Announced to the document as `joined` (its presence row written). Only such a session is announced as `left`
   * when it closes: one refused after its credential was read (connection limit, a failure) never joined.
   */
  joined = false;
  /**
   * The awareness client this socket speaks for: the first it announced (AwarenessService.fromSocket);
   * null until then. Updates for any other client are refused (JSON) or dropped (binary).
   */
  awarenessClientId: number | null = null;
  /** Awareness client ids this socket announced, with their last clock (cleared for others when it leaves). */
  readonly awarenessClocks = new Map<number, number>();
  private closed = false;
  private tokens: number;
  private lastRefill = Date.now();
  /** Pings sent since the last pong. */
  private unansweredPings = 0;

  constructor(
    readonly socket: WebSocket,
    private readonly config: RealtimeConfig,
    private readonly hooks: SessionHooks,
  ) {
    this.tokens = config.maxMessagesPerSecond * 2;
  }

  get userId(): string {
    return this.identity?.principal.userId ?? '';
  }

  get doc(): DocRef {
    if (!this.identity) {
      throw new Error('session not authenticated');
    }
    return this.identity.doc;
  }

  get accessKey(): string {
    return this.identity?.accessKey ?? this.sessionId;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  recheck(): Promise<boolean> {
    return this.identity ? this.hooks.recheck(this.identity) : Promise.resolve(false);
  }

  /** Token bucket: `maxMessagesPerSecond` sustained, twice that as a burst. False when over. */
  takeToken(): boolean {
    const now = Date.now();
    const rate = this.config.maxMessagesPerSecond;
    this.tokens = Math.min(rate * 2, this.tokens + ((now - this.lastRefill) / 1000) * rate);
    this.lastRefill = now;
    this.tokens -= 1;
    return this.tokens >= 0;
  }

  /** Far over the budget (a client ignoring its error replies): the caller closes the socket. */
  get abusive(): boolean {
    return this.tokens < -this.config.maxMessagesPerSecond * 2;
  }

  send(data: string | Uint8Array): void {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) {
      return;
    }
    if (this.socket.bufferedAmount > this.config.maxBufferedBytes) {
      this.close('SLOW_CONSUMER');
      return;
    }
    this.socket.send(data);
  }

  reply(seq: number | null, kind: 'ack' | 'error', payload: unknown): void {
    this.send(JSON.stringify({ kind, seq, payload }));
  }

  replyError(seq: number | null, error: unknown): AppException {
    const failure = error instanceof AppException ? error : new AppException(ErrorCode.INTERNAL_ERROR);
    this.reply(seq, 'error', {
      code: failure.code,
      message: failure.options.message ?? messageOf(failure.code),
      ...(failure.options.details?.length ? { details: errorDetailsOf(failure.options.details) } : {}),
      ...(failure.options.payload !== undefined ? { payload: failure.options.payload } : {}),
    });
    return failure;
  }

  deliverEvent(event: StreamEvent): void {
    let frame = framed.get(event);
    if (frame === undefined) {
      frame = JSON.stringify({ kind: 'event', payload: event });
      framed.set(event, frame);
    }
    this.send(frame);
  }

  push(kind: ServerKind, payload: Record<string, unknown>): void {
    if (
      this.binary &&
      (kind === 'yjs_update' || kind === 'awareness') &&
      typeof payload.update === 'string'
    ) {
      const bytes = fromBase64(payload.update);
      this.send(kind === 'yjs_update' ? encodeSync(SYNC_UPDATE, bytes) : encodeAwarenessFrame(bytes));
      return;
    }
    this.send(JSON.stringify({ kind, payload }));
  }

  /**
   * A ping per heartbeat; a socket that answered neither of the last two is gone and is terminated. Two, not
   * one: after the event loop stalls for longer than a heartbeat, Node runs the late timer before it reads
   * the pong already waiting on the socket, so a single missed answer is not proof of a dead peer. Between
   * two firings of the interval the loop always polls the sockets once.
   */
  heartbeat(): void {
    if (this.closed) {
      return;
    }
    if (this.unansweredPings >= 2) {
      this.socket.terminate();
      return;
    }
    this.unansweredPings += 1;
    this.socket.ping();
  }

  pong(): void {
    this.unansweredPings = 0;
  }

  close(reason: CloseReason): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    const code = CLOSE_CODES[reason];
    if (reason === 'SLOW_CONSUMER') {
      this.socket.terminate();
    } else if (this.socket.readyState === this.socket.OPEN) {
      this.socket.send(JSON.stringify({ kind: 'closing', payload: { code, reason } }));
      this.socket.close(code, reason);
    }
    this.hooks.closed(this);
  }

  /** The socket closed from the other side (or after close()). */
  markClosed(): void {
    if (!this.closed) {
      this.closed = true;
      this.hooks.closed(this);
    }
  }
}
