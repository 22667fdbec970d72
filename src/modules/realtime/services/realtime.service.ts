import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import * as Y from 'yjs';
import { credentialOf } from '../../../common/auth/auth.guard.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { offsetOf, type Page, pageOf } from '../../../common/http/pagination.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import { ComputedAccessService } from '../../documents/services/computed/computed-access.service.js';
import { connectOrigin } from '../domain/connect-origin.js';
import { lockTargetFieldProblem, lockTargetIdProblems, normalizeTarget } from '../domain/lock-targets.js';
import { WS_PATH, WS_PROTOCOLS } from '../domain/realtime-protocol.js';
import { fromBase64, toBase64 } from '../domain/yjs-wire.js';
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
import { AwarenessService } from './awareness.service.js';
import { docRefOf, RealtimeAuthService } from './realtime-auth.service.js';
import { RealtimeBus } from './realtime-bus.service.js';
import { RealtimeLockService } from './realtime-lock.service.js';
import { PresenceService } from './presence.service.js';
import { YjsStateService } from './yjs-state.service.js';

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
    private readonly awarenessUpdates: AwarenessService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly computedAccess: ComputedAccessService,
  ) {}

  /**
   * Where and how to connect. URLs are built from the address the request came to (its scheme and host; behind a
   * proxy the forwarded ones, per TRUST_PROXY) when that host is a plain host name or address with an optional
   * port, else from PUBLIC_BASE_URL (connect-origin.ts). The token is issued once the URLs are known.
   */
  async connect(ctx: DocumentContext, request: Request): Promise<ConnectResponseDto> {
    const origin = connectOrigin(request.host, request.protocol, this.config.publicBaseUrl);
    const doc = docRefOf(ctx);
    const context = new URLSearchParams({ docType: doc.docType, docId: doc.docId });
    const workspaceId = doc.viaWorkspaceId ?? doc.workspaceId;
    if (workspaceId) {
      context.set('workspaceId', workspaceId);
    } else {
      context.set('organizationId', doc.organizationId);
    }
    const wsPath = `${origin.prefix}${WS_PATH}`;
    const streamPath = `${origin.prefix}/realtime/doc/${encodeURIComponent(doc.docType)}/${encodeURIComponent(doc.docId)}/events/stream`;
    const binding = await this.auth.bindingOf(ctx.principal, credentialOf(request));
    const { token, expiresIn } = await this.auth.issueConnectToken(ctx, binding);
    return {
      wsUrl: `${origin.secure ? 'wss' : 'ws'}://${origin.authority}${wsPath}?${context.toString()}`,
      // The host name alone: `port` is its own field, so ws://{wsHost}:{port}{wsPath} is the socket's address.
      wsHost: origin.hostname,
      wsPath,
      port: origin.port,
      protocols: [...WS_PROTOCOLS],
      sseUrl: `${origin.secure ? 'https' : 'http'}://${origin.authority}${streamPath}?${new URLSearchParams({ token }).toString()}`,
      token,
      expiresIn,
    };
  }

  async events(
    ctx: DocumentContext,
    query: { page: number; pageSize: number },
  ): Promise<Page<StreamEventDto>> {
    const { items, total } = await this.eventLog.page(docRefOf(ctx), offsetOf(query), query.pageSize);
    // Row values as the caller may see them (docs/formulas.md, "Access"), as the stream carries them.
    const mask = await this.computedAccess.historyMask(ctx);
    return pageOf(
      items.map((event) => mask.event(event)),
      total,
      query,
    );
  }

  users(ctx: DocumentContext): Promise<OnlineUserDto[]> {
    return this.presence.users(docRefOf(ctx));
  }

  lock(ctx: DocumentContext, body: CreateLockDto): Promise<LockDto> {
    const problems = lockTargetIdProblems(body.target);
    const fieldProblem =
      problems.length === 0
        ? lockTargetFieldProblem(
            body.target,
            ctx.document.metadata.fields.map((field) => field.id),
          )
        : null;
    if (fieldProblem) {
      problems.push(fieldProblem);
    }
    if (problems.length > 0) {
      throw AppException.validation(
        problems.map((problem) => ({ field: `target.${problem.key}`, reason: problem.reason })),
      );
    }
    return this.locks.acquire(ctx, {
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
    return this.locks.list(ctx.document);
  }

  /** A snapshot of the current state; one taken without a name (spec 4.5 names no body) is named by its time. */
  async createSnapshot(ctx: DocumentContext, name: string | undefined | null): Promise<SnapshotDto> {
    const stored = await this.yjs.createSnapshot(
      docRefOf(ctx),
      name ?? new Date().toISOString(),
      ctx.principal.userId,
    );
    return snapshotView(stored, true);
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

  /** Awareness over HTTP (AwarenessService.fromHttp): one client of the caller, kept for a few heartbeats. */
  async awareness(ctx: DocumentContext, update: string): Promise<Record<string, never>> {
    await this.awarenessUpdates.fromHttp(docRefOf(ctx), ctx.principal.userId, fromBase64(update));
    return {};
  }

  /** Ends every stream and socket of the document on every instance (they may reconnect and are checked again). */
  async disconnectAll(ctx: DocumentContext): Promise<Record<string, never>> {
    await this.bus.publish({ t: 'disconnect', doc: ctx.document.uuid });
    return {};
  }
}
