import { Injectable } from '@nestjs/common';
import { assertNever } from '../../../common/assert-never.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { lockTargetFieldProblem, normalizeTarget } from '../domain/lock-targets.js';
import type { ClientMessage } from '../domain/realtime-messages.js';
import { decodeFrame, encodeSync, fromBase64, isEmptyUpdate, SYNC_STEP1, SYNC_STEP2, toBase64 } from '../domain/yjs-wire.js';
import { AwarenessService } from './awareness.service.js';
import { PresenceService } from './presence.service.js';
import { RealtimeAuthService } from './realtime-auth.service.js';
import { RealtimeLockService } from './realtime-lock.service.js';
import type { RealtimeSession } from './realtime-session.js';
import { YjsStateService } from './yjs-state.service.js';

/**
 * What the messages of an authenticated socket do (docs/realtime.md, "WebSocket sessions"): each JSON message kind
 * and each y-protocols binary frame, under the same rules as its HTTP route, checked as the caller's rights are now.
 * The socket's life (handshake, ordering, limits, clean-up) is RealtimeSessionService's.
 */
@Injectable()
export class RealtimeMessagesService {
  constructor(
    private readonly auth: RealtimeAuthService,
    private readonly presence: PresenceService,
    private readonly locks: RealtimeLockService,
    private readonly yjs: YjsStateService,
    private readonly awareness: AwarenessService,
  ) {}

  /** The answer (`ack` payload) to one JSON message of an authenticated socket; throws what becomes its `error`. */
  async handle(session: RealtimeSession, message: ClientMessage): Promise<Record<string, unknown>> {
    const identity = session.identity;
    if (!identity) {
      throw new AppException(ErrorCode.UNAUTHORIZED);
    }
    const doc = identity.doc;
    switch (message.kind) {
      case 'auth':
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [{ field: 'kind', reason: 'already authenticated' }],
        });
      case 'ping':
        return { now: new Date().toISOString() };
      case 'yjs_sync': {
        const diff = await this.yjs.diff(
          doc,
          message.payload.stateVector ? fromBase64(message.payload.stateVector) : undefined,
        );
        return { update: toBase64(diff.update), stateVector: toBase64(diff.stateVector) };
      }
      case 'yjs_update':
        // The same rules as POST /apply-update, as they are now (not as they were at connect).
        await this.auth.authorizeWrite(identity, 'doc:write');
        return this.yjs.applyUpdate(
          doc,
          fromBase64(message.payload.update),
          identity.principal.userId,
          session.sessionId,
        );
      case 'awareness':
        await this.awareness.fromSocket(
          session,
          fromBase64(message.payload.update),
          'refuse',
          'payload.update',
        );
        return {};
      case 'lock': {
        // The same rules as POST /lock.
        const ctx = await this.auth.authorizeWrite(identity, 'data:write');
        const { fields } = ctx.document.metadata;
        const problem = lockTargetFieldProblem(
          message.payload.target,
          fields.map((field) => field.id),
        );
        if (problem) {
          throw AppException.validation([{ field: `payload.target.${problem.key}`, reason: problem.reason }]);
        }
        const lock = await this.locks.acquire(ctx, {
          target: normalizeTarget(message.payload.target),
          ttlSeconds: message.payload.ttlSeconds,
          exclusive: message.payload.exclusive,
          sessionId: session.sessionId,
        });
        if (session.isClosed) {
          // Closed while the lock was taken: its clean-up may have released the session's locks before this one.
          await this.locks.releaseSession(doc, session.sessionId);
        }
        return { ...lock };
      }
      case 'unlock': {
        // As DELETE /unlock: manage rights as they are now decide whether another user's lock may be released.
        const ctx = await this.auth.reopen(identity, 'read');
        await this.locks.release(
          doc,
          message.payload.lockId,
          identity.principal.userId,
          ctx.access.canManage,
        );
        return {};
      }
      case 'users':
        return { items: await this.presence.users(doc) };
      case 'locks': {
        const ctx = await this.auth.reopen(identity, 'read');
        return { items: await this.locks.list(ctx.document) };
      }
      default:
        return assertNever(message);
    }
  }

  /** Standard y-protocols frames: sync step 1 → step 2 (+ our step 1), updates, awareness. */
  async onBinary(session: RealtimeSession, data: Buffer): Promise<void> {
    session.binary = true;
    const identity = session.identity;
    if (!identity) {
      return;
    }
    try {
      const frame = decodeFrame(new Uint8Array(data));
      switch (frame.type) {
        case 'sync-step1': {
          const diff = await this.yjs.diff(identity.doc, frame.stateVector);
          session.send(encodeSync(SYNC_STEP2, diff.update));
          session.send(encodeSync(SYNC_STEP1, diff.stateVector));
          return;
        }
        case 'update':
          // An update without content changes nothing, so it needs no write rights: a read-only stock provider
          // answers the server's step 1 with one on every connect, and was refused each time.
          if (isEmptyUpdate(frame.update)) {
            return;
          }
          // Refused like a JSON yjs_update, with an error frame (seq null): nothing is stored or relayed.
          await this.auth.authorizeWrite(identity, 'doc:write');
          await this.yjs.applyUpdate(
            identity.doc,
            frame.update,
            identity.principal.userId,
            session.sessionId,
          );
          return;
        case 'awareness':
          await this.awareness.fromSocket(session, frame.update, 'drop', 'frame');
          return;
        default:
          assertNever(frame);
      }
    } catch (error) {
      session.replyError(
        null,
        error instanceof AppException
          ? error
          : AppException.validation([
              { field: 'frame', reason: 'not a y-protocols sync or awareness message' },
            ]),
      );
    }
  }
}
