import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import * as Y from 'yjs';
import { credentialOf } from '../../../common/auth/auth.guard.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { offsetOf, type Page, pageOf } from '../../../common/http/pagination.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import { lockTargetIdProblems, normalizeTarget } from '../domain/lock-targets.js';
import { WS_PATH, WS_PROTOCOLS } from '../domain/realtime-protocol.js';
import { decodeAwareness, fromBase64, toBase64 } from '../domain/yjs-wire.js';
import type {
  ApplyUpdateResultDto,
  ConnectResponseDto,
  CreateLockDto,
  LockDto,
  OnlineUserDto,
  SnapshotDto,
  StreamEventDto,
} from '../dtos/realtime.dto.js';
import type { SnapshotRecord } from '../repositories/yjs-state.repository.js';
import { RealtimeEventRepository } from '../repositories/realtime-event.repository.js';
import { docRefOf, RealtimeAuthService } from './realtime-auth.service.js';
import { RealtimeBus } from './realtime-bus.service.js';
import { RealtimeLockService } from './realtime-lock.service.js';
import { PresenceService } from './presence.service.js';
import { YjsStateService } from './yjs-state.service.js';

/** HTTP awareness clients are identified by user, document and Yjs client id (no socket to name them). */
function httpSessionId(userId: string, documentUuid: string, clientId: number): string {
  const hex = createHash('sha256').update(`${userId}|${documentUuid}|${clientId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function snapshotView(snapshot: SnapshotRecord, withState: boolean): SnapshotDto {
  return {
    snapshotId: snapshot.id,
    name: snapshot.name,
    ...(withState
      ? {
          state: toBase64(snapshot.state),
          stateVector: toBase64(Y.encodeStateVectorFromUpdate(snapshot.state)),
        }
      : {}),
    sizeBytes: snapshot.sizeBytes,
    createdBy: snapshot.createdBy,
    createdAt: new Date(snapshot.createdAt).toISOString(),
  };
}

/** The HTTP side of realtime (spec 4.5): one method per route, the document already opened by the guard. */
@Injectable()
export class RealtimeService {
  constructor(
    private readonly auth: RealtimeAuthService,
    private readonly bus: RealtimeBus,
    private readonly eventLog: RealtimeEventRepository,
    private readonly presence: PresenceService,
    private readonly locks: RealtimeLockService,
    private readonly yjs: YjsStateService,
  ) {}

  /**
   * Where and how to connect. URLs are built from the request's own scheme and host (behind a proxy: the
   * forwarded ones, per TRUST_PROXY), so they are right for whoever asks.
   */
  async connect(ctx: DocumentContext, request: Request): Promise<ConnectResponseDto> {
    const binding = this.auth.bindingOf(ctx.principal, credentialOf(request));
    const { token, expiresIn } = await this.auth.issueConnectToken(ctx, binding);
    const secure = request.protocol === 'https';
    const host = request.get('host') ?? 'localhost';
    const authority = new URL(`http://${host}`);
    const port = Number(authority.port || (secure ? 443 : 80));
    const doc = docRefOf(ctx);
    const context = new URLSearchParams({ docType: doc.docType, docId: doc.docId });
    const workspaceId = doc.viaWorkspaceId ?? doc.workspaceId;
    if (workspaceId) {
      context.set('workspaceId', workspaceId);
    } else {
      context.set('organizationId', doc.organizationId);
    }
    const streamPath = `/realtime/doc/${encodeURIComponent(doc.docType)}/${encodeURIComponent(doc.docId)}/events/stream`;
    return {
      wsUrl: `${secure ? 'wss' : 'ws'}://${host}${WS_PATH}?${context.toString()}`,
      // The host name alone: `port` is its own field, so ws://{wsHost}:{port}{wsPath} is the socket's address.
      wsHost: authority.hostname,
      wsPath: WS_PATH,
      port,
      protocols: [...WS_PROTOCOLS],
      sseUrl: `${secure ? 'https' : 'http'}://${host}${streamPath}?${new URLSearchParams({ token }).toString()}`,
      token,
      expiresIn,
    };
  }

  async events(
    ctx: DocumentContext,
    query: { page: number; pageSize: number },
  ): Promise<Page<StreamEventDto>> {
    const { items, total } = await this.eventLog.page(docRefOf(ctx), offsetOf(query), query.pageSize);
    return pageOf(items, total, query);
  }

  users(ctx: DocumentContext): Promise<OnlineUserDto[]> {
    return this.presence.users(docRefOf(ctx));
  }

  lock(ctx: DocumentContext, body: CreateLockDto): Promise<LockDto> {
    const problems = lockTargetIdProblems(body.target);
    if (problems.length > 0) {
      throw AppException.validation(
        problems.map((problem) => ({ field: `target.${problem.key}`, reason: problem.reason })),
      );
    }
    return this.locks.acquire(docRefOf(ctx), ctx.principal.userId, {
      target: normalizeTarget(body.target),
      ttlSeconds: body.ttlSeconds,
      exclusive: body.exclusive,
      sessionId: null,
    });
  }

  unlock(ctx: DocumentContext, lockId: string): Promise<void> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(lockId)) {
      throw AppException.notFound('lock');
    }
    return this.locks.release(docRefOf(ctx), lockId, ctx.principal.userId, ctx.access.canManage);
  }

  listLocks(ctx: DocumentContext): Promise<LockDto[]> {
    return this.locks.list(docRefOf(ctx));
  }

  async createSnapshot(ctx: DocumentContext, name: string): Promise<SnapshotDto> {
    return snapshotView(await this.yjs.createSnapshot(docRefOf(ctx), name, ctx.principal.userId), true);
  }

  /** A named snapshot (by id or newest with the name), or the current state when neither is given. */
  async snapshot(ctx: DocumentContext, by: { snapshotId?: string; name?: string }): Promise<SnapshotDto> {
    const doc = docRefOf(ctx);
    if (by.snapshotId || by.name) {
      const found = await this.yjs.findSnapshot(doc, { id: by.snapshotId, name: by.name });
      if (!found) {
        throw AppException.notFound('snapshot');
      }
      return snapshotView(found, true);
    }
    const state = await this.yjs.state(doc);
    return {
      snapshotId: null,
      name: null,
      state: toBase64(state),
      stateVector: toBase64(Y.encodeStateVectorFromUpdate(state)),
      sizeBytes: state.byteLength,
      createdBy: null,
      createdAt: null,
    };
  }

  async snapshots(
    ctx: DocumentContext,
    query: { page: number; pageSize: number },
  ): Promise<Page<SnapshotDto>> {
    const { items, total } = await this.yjs.listSnapshots(docRefOf(ctx), offsetOf(query), query.pageSize);
    return pageOf(
      items.map((item) => snapshotView(item, false)),
      total,
      query,
    );
  }

  applyUpdate(ctx: DocumentContext, update: string): Promise<ApplyUpdateResultDto> {
    return this.yjs.applyUpdate(docRefOf(ctx), fromBase64(update), ctx.principal.userId, null);
  }

  /** Awareness over HTTP: kept as presence for a few heartbeats (no socket keeps it alive); a null state leaves. */
  async awareness(ctx: DocumentContext, update: string): Promise<Record<string, never>> {
    const doc = docRefOf(ctx);
    const bytes = fromBase64(update);
    let clientId: number;
    let leaving: boolean;
    try {
      const first = decodeAwareness(bytes)[0];
      if (!first) {
        throw new Error('empty');
      }
      clientId = first.clientId;
      leaving = first.state === null;
    } catch {
      throw AppException.validation([{ field: 'update', reason: 'update is not a valid awareness update' }]);
    }
    const sessionId = httpSessionId(ctx.principal.userId, doc.uuid, clientId);
    if (!leaving) {
      await this.presence.join(doc, sessionId, ctx.principal.userId, 'http');
    }
    await this.yjs.applyAwareness(doc, bytes, sessionId);
    if (leaving) {
      await this.presence.leave(doc, sessionId, ctx.principal.userId);
    }
    return {};
  }

  /** Ends every stream and socket of the document on every instance (they may reconnect and are checked again). */
  async disconnectAll(ctx: DocumentContext): Promise<Record<string, never>> {
    await this.bus.publish({ t: 'disconnect', doc: ctx.document.uuid });
    return {};
  }
}
