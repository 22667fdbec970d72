import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import type { RevisionRecord } from '../domain/document.records.js';
import type { RequestResponseDto } from '../dtos/request.dto.js';
import type { ChangeOperationDto, RevisionResponseDto } from '../dtos/revision.dto.js';
import { INLINE_CHANGES, toOperationDto, toRequestDto, toRevisionDto } from '../mappers/document.mapper.js';
import { RequestRepository } from '../repositories/request.repository.js';
import { RevisionRepository } from '../repositories/revision.repository.js';
import { ComputedAccessService } from './computed/computed-access.service.js';
import type { DocumentContext } from './document-access.service.js';
import { revisionNotFound } from './revision-history.service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The immutable history: revisions, their ChangeOperations, and the request each came from. */
@Injectable()
export class RevisionsService {
  constructor(
    private readonly revisions: RevisionRepository,
    private readonly requests: RequestRepository,
    private readonly computedAccess: ComputedAccessService,
  ) {}

  async list(ctx: DocumentContext, paging: { page: number; pageSize: number }): Promise<Page<RevisionResponseDto>> {
    const { items, total } = await this.revisions.list(ctx.document.uuid, { limit: paging.pageSize, offset: (paging.page - 1) * paging.pageSize });
    return this.page(ctx, items, total, paging);
  }

  /** Listed revisions with the first operations of each (mappers, INLINE_CHANGES). */
  private async page(ctx: DocumentContext, items: RevisionRecord[], total: number, paging: { page: number; pageSize: number }): Promise<Page<RevisionResponseDto>> {
    const operations = await this.revisions.firstOperationsOf(items.map((revision) => revision.id), INLINE_CHANGES.listed);
    const mask = await this.computedAccess.historyMask(ctx);
    return pageOf(
      items.map((revision) => toRevisionDto(revision, ctx.document.metadata, (operations.get(revision.id) ?? []).map((op) => mask.operation(op)))),
      total,
      paging,
    );
  }

  /** The revisions merged after revision `since` (an id of this document), oldest first; all of them without `since`. */
  async listSince(ctx: DocumentContext, since: string | undefined, paging: { page: number; pageSize: number }): Promise<Page<RevisionResponseDto>> {
    const after = since === undefined ? 0 : (await this.find(ctx, since)).version;
    const { items, total } = await this.revisions.listAfter(ctx.document.uuid, after, { limit: paging.pageSize, offset: (paging.page - 1) * paging.pageSize });
    return this.page(ctx, items, total, paging);
  }

  async get(ctx: DocumentContext, revisionId: string): Promise<RevisionResponseDto> {
    const revision = await this.find(ctx, revisionId);
    const operations = await this.revisions.operations(revision.id, { limit: INLINE_CHANGES.single, offset: 0 });
    const mask = await this.computedAccess.historyMask(ctx);
    return toRevisionDto(revision, ctx.document.metadata, operations.map((op) => mask.operation(op)));
  }

  async operations(ctx: DocumentContext, revisionId: string, paging: { page: number; pageSize: number }): Promise<Page<ChangeOperationDto>> {
    const revision = await this.find(ctx, revisionId);
    const operations = await this.revisions.operations(revision.id, { limit: paging.pageSize, offset: (paging.page - 1) * paging.pageSize });
    const mask = await this.computedAccess.historyMask(ctx);
    return pageOf(
      operations.map((op) => toOperationDto(mask.operation(op), ctx.document.metadata)),
      revision.operationCount,
      paging,
    );
  }

  async request(ctx: DocumentContext, revisionId: string): Promise<RequestResponseDto> {
    const revision = await this.find(ctx, revisionId);
    const request = revision.requestId ? await this.requests.find(ctx.document.uuid, revision.requestId) : null;
    if (!request) {
      throw AppException.notFound('request');
    }
    return toRequestDto(request, ctx.document, await this.requests.changes(request.id, { limit: INLINE_CHANGES.single }));
  }

  private async find(ctx: DocumentContext, revisionId: string): Promise<RevisionRecord> {
    const revision = UUID.test(revisionId) ? await this.revisions.find(ctx.document.uuid, revisionId) : null;
    if (!revision) {
      throw revisionNotFound();
    }
    return revision;
  }
}
