import type { IncomingMessage } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request } from 'express';
import type { RawData, WebSocket } from 'ws';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import type { DocumentScope } from '../../documents/services/document-access.service.js';
import { parseClientMessage } from '../domain/realtime-messages.js';
import type { CloseReason } from '../domain/realtime-protocol.js';
import { type HandshakeRefusal, readHandshake, readSocketTarget } from '../domain/socket-handshake.js';
import { encodeAwareness, toBase64 } from '../domain/yjs-wire.js';
import { AwarenessService } from './awareness.service.js';
import { RealtimeAuthService } from './realtime-auth.service.js';
import { RealtimeHub } from './realtime-hub.service.js';
import { RealtimeLockService } from './realtime-lock.service.js';
import { RealtimeSession } from './realtime-session.js';
import { RealtimeMessagesService } from './realtime-messages.service.js';
import { PresenceService } from './presence.service.js';

function rawToBuffer(data: RawData): Buffer {
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
}

/**
 * A VALIDATION_ERROR of a JSON message names the field as the message carries it (`payload.ttlSeconds`,
 * `payload.update`), as the parser does: the services it reaches name their own inputs (`ttlSeconds`, `update`)
 * as the HTTP routes' bodies have them.
 */
function inPayload(error: unknown): unknown {
  if (
    !(error instanceof AppException) ||
    error.code !== ErrorCode.VALIDATION_ERROR ||
    !error.options.details
  ) {
    return error;
  }
  return new AppException(ErrorCode.VALIDATION_ERROR, {
    ...error.options,
    details: error.options.details.map((detail) =>
      detail.field === undefined || detail.field.startsWith('payload.')
        ? detail
        : { ...detail, field: `payload.${detail.field}` },
    ),
  });
}

const SERVER_FAILURES = new Set<ErrorCode>([ErrorCode.INTERNAL_ERROR, ErrorCode.SERVICE_UNAVAILABLE]);
const ACCESS_REFUSALS = new Set<ErrorCode>([
  ErrorCode.DOC_NOT_FOUND,
  ErrorCode.FORBIDDEN,
  ErrorCode.AMBIGUOUS_DOCUMENT,
]);

/**
 * How a refused `auth` closes (docs/realtime.md, "Close codes"). A failure of the server (an error that is not an
 * AppException, or INTERNAL_ERROR / SERVICE_UNAVAILABLE) is 1011 at any stage: neither a bad credential nor rate
 * limiting, which would send clients to fetch a token again or back off for the wrong reason.
 */
function handshakeCloseReason(error: unknown, authenticated: boolean): CloseReason {
  if (!(error instanceof AppException) || SERVER_FAILURES.has(error.code)) {
    return 'INTERNAL_ERROR';
  }
  if (ACCESS_REFUSALS.has(error.code)) {
    return 'ACCESS_LOST';
  }
  if (error.code === ErrorCode.VALIDATION_ERROR) {
    return 'BAD_HANDSHAKE';
  }
  if (error.code === ErrorCode.RATE_LIMIT_EXCEEDED) {
    return 'TOO_MANY';
  }
  // Before the credential was accepted, anything else refuses the credential (UNAUTHORIZED, INVALID_TOKEN …);
  // after it, only the connection limit refuses on purpose: the rest is the server's failure.
  return authenticated ? 'INTERNAL_ERROR' : 'UNAUTHENTICATED';
}

/**
 * The socket protocol (docs/realtime.md, "WebSocket sessions"): `auth` first within REALTIME_AUTH_TIMEOUT_MS,
 * then `{kind, seq, payload}` messages answered by `ack`/`error` with the same seq, processed one at a time per
 * socket; binary frames are y-protocols sync/awareness. Nothing a client sends can throw out of here: every
 * failure becomes an `error` reply (or a close with a documented code).
 */
@Injectable()
export class RealtimeSessionService {
  private readonly logger = new Logger(RealtimeSessionService.name);

  constructor(
    private readonly auth: RealtimeAuthService,
    private readonly hub: RealtimeHub,
    private readonly presence: PresenceService,
    private readonly locks: RealtimeLockService,
    private readonly awareness: AwarenessService,
    private readonly messages: RealtimeMessagesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  accept(socket: WebSocket, request: IncomingMessage): void {
    const session = new RealtimeSession(socket, this.config.realtime, {
      recheck: (identity) => this.auth.stillAllowed(identity),
      closed: (closed) => this.hub.track(this.cleanUp(closed)),
    });
    // The ws adapter logs every socket error at error level with its stack. They are the client's doing (a frame
    // over the cap, bad framing, a reset connection) and any client could flood the log with them: debug only.
    socket.removeAllListeners('error');
    socket.on('error', (error: Error & { code?: string }) => {
      this.logger.debug({ code: error.code, reason: error.message }, 'realtime socket error');
      session.markClosed();
    });
    const place = this.hub.admitUnauthenticated();
    if (!place) {
      session.replyError(
        null,
        new AppException(ErrorCode.RATE_LIMIT_EXCEEDED, {
          details: [{ reason: 'this instance has no room for another realtime connection' }],
        }),
      );
      session.close('TOO_MANY');
      return;
    }
    const timer = setTimeout(() => session.close('AUTH_TIMEOUT'), this.config.realtime.authTimeoutMs);
    timer.unref();
    let queue = Promise.resolve();
    socket.on('pong', () => session.pong());
    socket.on('close', () => {
      clearTimeout(timer);
      place.release();
      session.markClosed();
    });
    // Frames are handled one at a time; the limits apply as they arrive, so a client sending faster than its
    // messages are handled (a slow handshake, a busy database) never makes the server hold its frames without end.
    let waiting = 0;
    let first = true;
    socket.on('message', (data: RawData, isBinary: boolean) => {
      const frame = rawToBuffer(data);
      const opening = first;
      first = false;
      if (!this.admit(session, frame, waiting, opening)) {
        return;
      }
      waiting += 1;
      queue = queue
        .then(() => this.onMessage(session, request, frame, isBinary, timer, place))
        .catch((error: unknown) => this.logger.error({ err: error }, 'realtime message handling failed'))
        .finally(() => {
          waiting -= 1;
        });
    });
  }

  /**
   * The rate (a token bucket), the number of frames waiting their turn (at most one burst) and the size; a frame
   * over any of them is answered at once with `seq: null` and dropped. Far over the rate, the socket closes (4429).
   * An oversized `opening` frame (the socket's first: its `auth` message) also closes it as a bad handshake
   * (4400): that frame was the first message and was not a readable `auth`, as for any other malformed one.
   */
  private admit(session: RealtimeSession, frame: Buffer, waiting: number, opening: boolean): boolean {
    if (session.isClosed) {
      return false;
    }
    const { maxMessagesPerSecond, maxMessageBytes } = this.config.realtime;
    if (!session.takeToken() || waiting >= maxMessagesPerSecond * 2) {
      session.replyError(
        null,
        new AppException(ErrorCode.RATE_LIMIT_EXCEEDED, {
          details: [{ reason: `at most ${maxMessagesPerSecond} messages per second` }],
        }),
      );
      if (session.abusive) {
        session.close('TOO_MANY');
      }
      return false;
    }
    if (frame.length > maxMessageBytes) {
      session.replyError(
        null,
        new AppException(ErrorCode.PAYLOAD_TOO_LARGE, {
          details: [{ reason: `messages are limited to ${maxMessageBytes} bytes` }],
        }),
      );
      if (opening) {
        session.close('BAD_HANDSHAKE');
      }
      return false;
    }
    return true;
  }

  private async onMessage(
    session: RealtimeSession,
    request: IncomingMessage,
    data: Buffer,
    isBinary: boolean,
    timer: NodeJS.Timeout,
    place: { release(): void },
  ): Promise<void> {
    if (session.isClosed) {
      return;
    }
    if (!session.identity) {
      try {
        await this.handshake(session, request, data, isBinary);
      } finally {
        // Authenticated (now counted by the hub as attached) or refused and closing: no longer pending.
        place.release();
      }
      clearTimeout(timer);
      return;
    }
    if (isBinary) {
      await this.messages.onBinary(session, data);
      return;
    }
    const parsed = parseClientMessage(data.toString('utf8'));
    if (!parsed.ok) {
      session.replyError(parsed.seq, AppException.validation(parsed.details));
      return;
    }
    try {
      session.reply(parsed.message.seq, 'ack', await this.messages.handle(session, parsed.message));
    } catch (error) {
      if (!(error instanceof AppException)) {
        this.logger.error({ err: error }, 'realtime message failed');
      }
      session.replyError(parsed.message.seq, inPayload(error));
    }
  }

  private async handshake(
    session: RealtimeSession,
    request: IncomingMessage,
    data: Buffer,
    isBinary: boolean,
  ): Promise<void> {
    const first = readHandshake(isBinary ? null : parseClientMessage(data.toString('utf8')));
    if (!first.ok) {
      this.refuseHandshake(session, first);
      return;
    }
    const { seq, token } = first;
    const url = new URL(request.url ?? '/', 'ws://localhost');
    const { target, details } = readSocketTarget(url);
    if (details.length > 0) {
      this.refuseHandshake(session, {
        ok: false,
        seq,
        code: 'VALIDATION_ERROR',
        close: 'BAD_HANDSHAKE',
        details,
      });
      return;
    }
    let authenticated = false;
    let acknowledged = false;
    try {
      const scope: DocumentScope = {
        ...(target.workspaceId ? { workspaceId: target.workspaceId } : {}),
        ...(target.organizationId ? { organizationId: target.organizationId } : {}),
      };
      // The credential verifier reads the caller's address, method and path (API key allow-lists, usage log).
      const httpLike = {
        ip: this.clientAddress(request),
        method: 'GET',
        url: url.pathname,
        originalUrl: url.pathname,
        headers: request.headers,
        query: {},
      } as unknown as Request;
      const identity = await this.auth.authenticateSocket(token, httpLike, {
        docType: target.docType,
        docId: target.docId,
        scope,
      });
      authenticated = true;
      session.identity = identity;
      await this.hub.attach(session, null);
      if (session.isClosed) {
        // Closed while attaching: clean-up already ran without this registration.
        this.hub.detach(session);
        return;
      }
      await this.presence.join(identity.doc, session.sessionId, identity.principal.userId, 'ws');
      session.joined = true;
      if (session.isClosed) {
        // Closed while joining: its clean-up ran before it had joined (no `left` then), and this instance
        // refreshes its sessions' rows every heartbeat, so the row would stay online for the instance's life.
        await this.presence.leave(identity.doc, session.sessionId, identity.principal.userId);
        return;
      }
      session.reply(seq, 'ack', {
        sessionId: session.sessionId,
        userId: identity.principal.userId,
        document: {
          docType: identity.doc.docType,
          docId: identity.doc.docId,
          organizationId: identity.doc.organizationId,
          workspaceId: identity.doc.workspaceId,
        },
        canWrite: identity.canWrite,
        lastEventId: session.position.seq.toString(),
      });
      acknowledged = true;
      await this.hub.catchUp(session, false);
      await this.sendCurrentAwareness(session);
    } catch (error) {
      if (!(error instanceof AppException)) {
        this.logger.error({ err: error }, 'realtime handshake failed');
      }
      // The `auth` message has its one reply once acknowledged: a failure catching the socket up after that is
      // told without a seq (like any frame not answering a message) before the close.
      session.replyError(acknowledged ? null : seq, error);
      session.close(handshakeCloseReason(error, authenticated));
    }
  }

  /**
   * The caller's address as Express gives it to HTTP requests (`req.ip`: X-Forwarded-For from the proxies
   * TRUST_PROXY trusts, else the socket's), so an API key's IP allow-list and usage log see the same client over
   * the socket as over HTTP. The socket's own address would be the proxy's behind one.
   */
  private clientAddress(request: IncomingMessage): string | undefined {
    const express = this.adapterHost.httpAdapter?.getInstance() as { request?: object } | undefined;
    if (!express?.request) {
      return request.socket.remoteAddress;
    }
    // Express's request prototype (it knows the app and its `trust proxy fn`) over this request's headers and socket.
    const view = Object.create(express.request, {
      headers: { value: request.headers },
      socket: { value: request.socket },
      connection: { value: request.socket },
    }) as { ip?: string };
    return view.ip;
  }

  /** Answers a first message that cannot open the session, then closes (4400, or 4401 without a token). */
  private refuseHandshake(session: RealtimeSession, refusal: HandshakeRefusal): void {
    session.replyError(refusal.seq, new AppException(ErrorCode[refusal.code], { details: refusal.details }));
    session.close(refusal.close);
  }

  /** A joining socket learns the awareness of everyone already there. */
  private async sendCurrentAwareness(session: RealtimeSession): Promise<void> {
    const others = (await this.presence.records(session.doc)).filter(
      (row) => row.sessionId !== session.sessionId && row.awarenessClientId !== null && row.state !== null,
    );
    if (others.length > 0) {
      const update = encodeAwareness(
        others.map((row) => ({
          clientId: row.awarenessClientId ?? 0,
          clock: row.awarenessClock ?? 0,
          state: row.state,
        })),
      );
      session.push('awareness', { update: toBase64(update) });
    }
  }

  /** Leaves presence, releases the session's locks and tells the others its awareness is gone. */
  private async cleanUp(session: RealtimeSession): Promise<void> {
    if (!session.identity) {
      return;
    }
    this.hub.detach(session);
    const doc = session.identity.doc;
    try {
      if (!session.joined) {
        // Refused or failed before it joined (its handshake handled no other message, so it holds no lock or
        // awareness): the others never heard of it and are told nothing. A join that failed after writing its
        // row (the notice not sent) would leave that row refreshed for the instance's life.
        await this.presence.forget(doc, session.sessionId);
        return;
      }
      await this.awareness.leave(session);
      await this.locks.releaseSession(doc, session.sessionId);
      await this.presence.leave(doc, session.sessionId, session.userId);
    } catch (error) {
      this.logger.warn(
        { err: error },
        'realtime session clean-up failed; presence and locks expire on their own',
      );
    }
  }
}
