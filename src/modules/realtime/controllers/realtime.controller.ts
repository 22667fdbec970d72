import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiHeader,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, Public, RequireScopes } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { type Page, pageOfList } from '../../../common/http/pagination.js';
import { RawResponse } from '../../../common/http/raw-response.decorator.js';
import { CurrentDocument, DocumentAccess } from '../../documents/controllers/document-access.guard.js';
import { readDocumentScope } from '../../documents/controllers/document-scope.js';
import { DocumentScopeQueryDto, PagedScopeQueryDto } from '../../documents/dtos/document-query.dto.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import { REALTIME_MESSAGE_SCHEMA } from '../domain/realtime-messages.js';
import {
  ApplyUpdateDto,
  ApplyUpdateResultDto,
  AwarenessDto,
  ConnectResponseDto,
  CreateLockDto,
  CreateSnapshotDto,
  EventStreamQueryDto,
  LockDto,
  OnlineUserDto,
  RealtimeMessageSchemaDto,
  SnapshotDto,
  SnapshotListQueryDto,
  SnapshotQueryDto,
  StreamEventDto,
} from '../dtos/realtime.dto.js';
import { EventStreamService } from '../services/event-stream.service.js';
import { RealtimeService } from '../services/realtime.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';

/**
 * Realtime (spec 4.5, 6.3), served at the host root (`/realtime/...`, see HOST_ROOT_ROUTES). Every
 * document route takes the document context like /doc routes (workspaceId / X-Workspace-Id, organizationId /
 * X-Organization-Id). The WebSocket endpoint itself is RealtimeGateway (docs/realtime.md).
 */
@ApiTags('realtime')
@Controller('realtime')
export class RealtimeController {
  constructor(
    private readonly realtime: RealtimeService,
    private readonly streams: EventStreamService,
  ) {}

  @Get('messages/schema')
  @Authenticated()
  @ApiOperation({
    summary: 'JSON Schema (2020-12) of every socket message kind, both directions, as the payload of the envelope',
  })
  @ApiEnvelope(RealtimeMessageSchemaDto)
  messageSchema(): Record<string, unknown> {
    return REALTIME_MESSAGE_SCHEMA;
  }

  @Get('doc/:docType/:docId/events/stream')
  @Public()
  @RawResponse()
  @ApiBearerAuth()
  @ApiParam({ name: 'docType', type: String })
  @ApiParam({ name: 'docId', type: String })
  @ApiOperation({
    summary: "The document's events as text/event-stream (spec 6.3)",
    description:
      'Authenticates itself (bearer credential with doc:read, or the connect token as bearer or ?token=), hence public in the route table. ' +
      'Each domain event is `id: <event id>`, `event: <type>`, `data: <envelope JSON>`. Resumes after Last-Event-ID within REALTIME_STREAM_RETENTION_SECONDS, ' +
      'else one `resync_required` event first; `retry:` hint, heartbeat comments; `stream_end` before the server ends it. See docs/realtime.md.',
  })
  @ApiResponse({
    status: 200,
    description: 'The event stream',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Resume after this event id (EventSource sends it on reconnect); wins over lastEventId',
  })
  @ApiResponse({
    status: 400,
    description:
      'VALIDATION_ERROR: an unknown or repeated query parameter, a malformed lastEventId or Last-Event-ID',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  @ApiResponse({ status: 401, description: 'UNAUTHORIZED / INVALID_TOKEN', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiResponse({ status: 404, description: 'DOC_NOT_FOUND', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiResponse({
    status: 429,
    description: 'RATE_LIMIT_EXCEEDED (connection limits)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  stream(
    @Req() request: Request,
    @Res() response: Response,
    @Param('docType') docType: string,
    @Param('docId') docId: string,
    @Query() _query: EventStreamQueryDto,
  ): Promise<void> {
    return this.streams.open(request, response, docType, docId, readDocumentScope(request));
  }

  @Get('doc/:docType/:docId/connect')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({
    summary: 'Connection details and a short-lived connect token bound to this document and user',
  })
  @ApiEnvelope(ConnectResponseDto)
  connect(
    @CurrentDocument() doc: DocumentContext,
    @Req() request: Request,
    @Query() _query: DocumentScopeQueryDto,
  ): Promise<ConnectResponseDto> {
    return this.realtime.connect(doc, request);
  }

  @Get('doc/:docType/:docId/events')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: "The document's event history, newest first (the events the stream carries)" })
  @ApiEnvelope(StreamEventDto, { shape: 'page' })
  events(
    @CurrentDocument() doc: DocumentContext,
    @Query() query: PagedScopeQueryDto,
  ): Promise<Page<StreamEventDto>> {
    return this.realtime.events(doc, query);
  }

  @Get('doc/:docType/:docId/users')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Who is online on the document (every instance), with awareness state; paged' })
  @ApiEnvelope(OnlineUserDto, { shape: 'page' })
  async users(
    @CurrentDocument() doc: DocumentContext,
    @Query() query: PagedScopeQueryDto,
  ): Promise<Page<OnlineUserDto>> {
    return pageOfList(await this.realtime.users(doc), query);
  }

  @Post('doc/:docType/:docId/lock')
  @RequireScopes('data:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Lock a row, cell, field or the document for a while' })
  @ApiEnvelope(LockDto, { status: 201 })
  @ApiConflictResponse({
    description: 'RESOURCE_LOCKED: payload.lock is the lock in the way',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  lock(
    @CurrentDocument() doc: DocumentContext,
    @Body() body: CreateLockDto,
    @Query() _query: DocumentScopeQueryDto,
  ): Promise<LockDto> {
    return this.realtime.lock(doc, body);
  }

  @Delete('doc/:docType/:docId/unlock/:lockId')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Release a lock (its holder, or a document manager)' })
  @ApiEnvelope(null)
  async unlock(
    @CurrentDocument() doc: DocumentContext,
    @Param('lockId') lockId: string,
    @Query() _query: DocumentScopeQueryDto,
    @NoBody() _body: undefined,
  ): Promise<Record<string, never>> {
    await this.realtime.unlock(doc, lockId);
    return {};
  }

  @Get('doc/:docType/:docId/locks')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Live locks of the document, oldest first; paged' })
  @ApiEnvelope(LockDto, { shape: 'page' })
  async locks(@CurrentDocument() doc: DocumentContext, @Query() query: PagedScopeQueryDto): Promise<Page<LockDto>> {
    return pageOfList(await this.realtime.listLocks(doc), query);
  }

  @Post('doc/:docType/:docId/snapshot')
  @RequireScopes('doc:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Store the current Yjs state as a named snapshot (no name: named by its time)' })
  @ApiEnvelope(SnapshotDto, { status: 201 })
  createSnapshot(
    @CurrentDocument() doc: DocumentContext,
    @Body() body: CreateSnapshotDto,
    @Query() _query: DocumentScopeQueryDto,
  ): Promise<SnapshotDto> {
    return this.realtime.createSnapshot(doc, body.name);
  }

  @Get('doc/:docType/:docId/snapshot')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'A named snapshot (snapshotId, or newest with name), else the current Yjs state' })
  @ApiEnvelope(SnapshotDto)
  snapshot(@CurrentDocument() doc: DocumentContext, @Query() query: SnapshotQueryDto): Promise<SnapshotDto> {
    return this.realtime.snapshot(doc, query);
  }

  @Get('doc/:docType/:docId/snapshots')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Named snapshots, newest first (without their state)' })
  @ApiEnvelope(SnapshotDto, { shape: 'page' })
  snapshots(
    @CurrentDocument() doc: DocumentContext,
    @Query() query: SnapshotListQueryDto,
  ): Promise<Page<SnapshotDto>> {
    return this.realtime.snapshots(doc, query);
  }

  @Post('doc/:docType/:docId/apply-update')
  @HttpCode(200)
  @RequireScopes('doc:write')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'HTTP fallback: apply a Yjs update (relayed to every socket of the document)' })
  @ApiEnvelope(ApplyUpdateResultDto)
  applyUpdate(
    @CurrentDocument() doc: DocumentContext,
    @Body() body: ApplyUpdateDto,
    @Query() _query: DocumentScopeQueryDto,
  ): Promise<ApplyUpdateResultDto> {
    return this.realtime.applyUpdate(doc, body.update);
  }

  @Post('doc/:docType/:docId/awareness')
  @HttpCode(200)
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'HTTP fallback: publish an awareness update (presence for a few heartbeats)' })
  @ApiEnvelope(null)
  awareness(
    @CurrentDocument() doc: DocumentContext,
    @Body() body: AwarenessDto,
    @Query() _query: DocumentScopeQueryDto,
  ): Promise<Record<string, never>> {
    return this.realtime.awareness(doc, body.update);
  }

  @Post('doc/:docType/:docId/disconnect-all')
  @HttpCode(200)
  @RequireScopes('doc:write')
  @DocumentAccess('manage')
  @ApiOperation({
    summary: 'End every stream and socket of the document, on every instance (document managers)',
  })
  @ApiEnvelope(null)
  disconnectAll(
    @CurrentDocument() doc: DocumentContext,
    @Query() _query: DocumentScopeQueryDto,
    @NoBody() _body: undefined,
  ): Promise<Record<string, never>> {
    return this.realtime.disconnectAll(doc);
  }
}
