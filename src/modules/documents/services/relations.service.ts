import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import type { ChangeDraft, RelationEnd } from '../domain/document.records.js';
import type { CreateRelationDto, ListRelationsQueryDto, RelationEndDto, RelationResponseDto, RelationWriteResponseDto } from '../dtos/relation.dto.js';
import { toWriteResult } from '../mappers/document.mapper.js';
import { type OtherEndReaders, type OtherEndScope, type RelationRecord, RelationRepository } from '../repositories/relation.repository.js';
import { RowRepository } from '../repositories/row.repository.js';
import { ChangeEngineService } from './change-engine.service.js';
import { type DocumentContext, DocumentAccessService, type DocumentScope } from './document-access.service.js';

function endDto(end: RelationEnd): RelationResponseDto['source'] {
  return { docType: end.docType, docId: end.docId, workspaceId: end.workspaceId, rowId: end.rowId };
}

export function toRelationDto(edge: RelationRecord): RelationResponseDto {
  return {
    id: edge.id,
    type: edge.type,
    direction: edge.direction,
    source: endDto(edge.source),
    target: endDto(edge.target),
    fieldId: edge.fieldId,
    metadata: edge.metadata,
    createdAt: edge.createdAt.toISOString(),
    createdBy: edge.createdBy,
  };
}

const MAX_METADATA_BYTES = 16_384;

/**
 * Relations between rows (spec 4.4, docs/documents.md "Relations"). An edge is written like any change: recorded on
 * a request of the source document (`requestId`, or one of its own merged at once) and created by the merge,
 * which re-checks both rows; the revision keeps it for a revert.
 */
@Injectable()
export class RelationsService {
  constructor(
    private readonly access: DocumentAccessService,
    private readonly engine: ChangeEngineService,
    private readonly relations: RelationRepository,
    private readonly rows: RowRepository,
  ) {}

  async create(principal: Principal, scope: DocumentScope, dto: CreateRelationDto, params: { requestId?: string; apply?: boolean } = {}): Promise<RelationWriteResponseDto> {
    // Bytes of UTF-8, as the message says: `.length` counted UTF-16 units and let non-Latin text through at up to three times the bound.
    if (dto.metadata !== undefined && Buffer.byteLength(JSON.stringify(dto.metadata)) > MAX_METADATA_BYTES) {
      throw AppException.validation([{ field: 'metadata', reason: `metadata must be at most ${MAX_METADATA_BYTES} bytes of JSON` }]);
    }
    const source = await this.access.open(principal, dto.source.docType, dto.source.docId, 'write', endScope(dto.source, scope));
    const target = await this.access.open(principal, dto.target.docType, dto.target.docId, 'read', endScope(dto.target, scope));
    if (target.document.organizationId !== source.document.organizationId) {
      throw AppException.validation([{ field: 'target', reason: 'both ends must be documents of one organization' }]);
    }
    const sameDocument = target.document.uuid === source.document.uuid;
    const id = randomUUID();
    const outcome = await this.engine.write(source, { requestId: params.requestId, apply: params.apply, title: `Relation ${dto.type}` }, async (draft) => {
      const rowIds = sameDocument ? [dto.source.rowId, dto.target.rowId] : [dto.source.rowId];
      const states = await draft.rows(rowIds);
      const details = [];
      if (!states.get(dto.source.rowId)?.exists) {
        details.push({ field: 'source.rowId', reason: `row ${dto.source.rowId} does not exist` });
      }
      const targetExists = sameDocument ? states.get(dto.target.rowId)?.exists === true : (await this.rows.find(target.document.uuid, dto.target.rowId)) !== null;
      if (!targetExists) {
        details.push({ field: 'target.rowId', reason: `row ${dto.target.rowId} does not exist` });
      }
      if (details.length > 0) {
        throw AppException.validation(details);
      }
      // The same edge, or a two-way edge of this type between the same rows from the other end (either of the
      // two being bidirectional): the rows are linked already.
      const existing = await this.relations.findFree(source.document.uuid, dto.source.rowId, dto.type, target.document.uuid, dto.target.rowId, dto.direction ?? 'outgoing');
      if (existing) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, { details: [{ reason: `the edge exists already (${existing.id})` }], payload: { relationId: existing.id } });
      }
      const change: ChangeDraft = {
        type: 'relation-create',
        operation: 'create',
        targetId: id,
        data: {
          type: dto.type,
          direction: dto.direction ?? 'outgoing',
          sourceRowId: dto.source.rowId,
          target: {
            documentUuid: target.document.uuid,
            docType: target.document.docType,
            docId: target.document.docId,
            workspaceId: target.document.workspaceId,
            rowId: dto.target.rowId,
          },
          metadata: dto.metadata ?? {},
        },
      };
      draft.push(change);
      return [change];
    });
    const end = (ctx: DocumentContext, rowId: string): RelationResponseDto['source'] => ({
      docType: ctx.document.docType,
      docId: ctx.document.docId,
      workspaceId: ctx.document.workspaceId,
      rowId,
    });
    const created = outcome.merge ? await this.relations.find(id) : null;
    return {
      ...(created
        ? toRelationDto(created)
        : {
            id,
            type: dto.type,
            direction: dto.direction ?? 'outgoing',
            source: end(source, dto.source.rowId),
            target: end(target, dto.target.rowId),
            fieldId: null,
            metadata: dto.metadata ?? {},
            createdAt: null,
            createdBy: principal.userId,
          }),
      request: toWriteResult(outcome),
    };
  }

  /**
   * Edges of the document (outgoing, or incoming), newest first; edges whose other end the caller may not read are
   * left out. "May read" is what opening that document would decide — its workspace role, then its and its type's
   * `permissions.view` — so a document of the caller's own workspace that `permissions.view` shuts them out of hides
   * its edges too: an edge names one of its rows and carries metadata (the document list shows only that it exists).
   */
  async list(ctx: DocumentContext, query: ListRelationsQueryDto): Promise<Page<RelationResponseDto>> {
    // Decided per workspace (or organization level) and type, not per document, and the documents' own lists in SQL
    // before paging: one check per other document made a hub of 2,000 edges take seconds per page.
    const byScope = new Map<string, { organizationId: string; workspaceId: string | null; scopes: OtherEndScope[] }>();
    for (const scope of await this.relations.otherScopes(ctx.document.uuid)) {
      const at = `${scope.organizationId}:${scope.workspaceId ?? ''}`;
      const group = byScope.get(at) ?? { organizationId: scope.organizationId, workspaceId: scope.workspaceId, scopes: [] };
      group.scopes.push(scope);
      byScope.set(at, group);
    }
    const open: string[] = [];
    const narrowed: Record<string, string[]> = {};
    for (const group of byScope.values()) {
      const answers = await this.access.viewNarrowingIn(ctx.principal.userId, group, group.scopes.map((scope) => scope.docType));
      for (const scope of group.scopes) {
        const answer = answers.get(scope.docType) ?? 'none';
        if (answer === 'all') {
          open.push(scope.key);
        } else if (answer !== 'none') {
          narrowed[scope.key] = answer.roles;
        }
      }
    }
    const readers: OtherEndReaders = { open, narrowed, userId: ctx.principal.userId.toLowerCase() };
    const { items, total } = await this.relations.list(
      ctx.document.uuid,
      query.direction ?? 'outgoing',
      { type: query.type, rowId: query.rowId, readers },
      { limit: query.pageSize, offset: (query.page - 1) * query.pageSize },
    );
    return pageOf(items.map(toRelationDto), total, query);
  }
}

/** An end's tenant: its own workspaceId/organizationId, else the call's context. */
function endScope(end: RelationEndDto, scope: DocumentScope): DocumentScope {
  if (end.workspaceId || end.organizationId) {
    return { ...(end.workspaceId ? { workspaceId: end.workspaceId } : {}), ...(end.organizationId ? { organizationId: end.organizationId } : {}) };
  }
  return scope;
}
