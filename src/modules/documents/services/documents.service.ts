import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { DocumentSourceService } from '../../tenancy/services/document-source.service.js';
import { WorkspaceAccessService } from '../../tenancy/services/workspace-access.service.js';
import { validateFieldDefinitions } from '../fields/field-definition.validator.js';
import { BUNDLE_SECTIONS, type BundleSection } from '../dtos/document-query.dto.js';
import type { CreateDocumentDto, DocumentBundleDto, DocumentResponseDto } from '../dtos/document.dto.js';
import { toDocumentDto, toMetadataDto, toRevisionDto, toSettingsDto } from '../mappers/document.mapper.js';
import { DocumentRepository } from '../repositories/document.repository.js';
import { PropertiesRepository } from '../repositories/properties.repository.js';
import { RevisionRepository } from '../repositories/revision.repository.js';
import { buildMetadataUpdate, parseSettings } from './change-builders.js';
import { ChangeEngineService } from './change-engine.service.js';
import { DOC_ID_PATTERN, DOC_TYPE_PATTERN, DocumentAccessService, type DocumentContext, READ_ONLY_REASON } from './document-access.service.js';
import { DraftReadService } from './draft-read.service.js';
import { RowQueryService } from './row-query.service.js';

const DEFAULT_REVISIONS_LIMIT = 20;

function parseInclude(include: string | undefined): Set<BundleSection> {
  if (include === undefined || include.trim() === '') {
    return new Set(BUNDLE_SECTIONS);
  }
  const sections = new Set<BundleSection>();
  for (const part of include.split(',').map((item) => item.trim()).filter(Boolean)) {
    if (!(BUNDLE_SECTIONS as readonly string[]).includes(part)) {
      throw AppException.validation([{ field: 'include', reason: `unknown section "${part}"; expected ${BUNDLE_SECTIONS.join(', ')}` }]);
    }
    sections.add(part as BundleSection);
  }
  return sections;
}

/** Documents as a whole: create, list per type and workspace, the bundle read, soft delete. */
@Injectable()
export class DocumentsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly documents: DocumentRepository,
    private readonly properties: PropertiesRepository,
    private readonly revisions: RevisionRepository,
    private readonly access: DocumentAccessService,
    private readonly sources: DocumentSourceService,
    private readonly workspaces: WorkspaceAccessService,
    private readonly engine: ChangeEngineService,
    private readonly drafts: DraftReadService,
    private readonly rowQueries: RowQueryService,
  ) {}

  async create(principal: Principal, docType: string, dto: CreateDocumentDto): Promise<DocumentResponseDto> {
    if (!DOC_TYPE_PATTERN.test(docType)) {
      throw AppException.validation([{ field: 'docType', reason: 'docType must match ^[A-Za-z0-9_.-]{1,64}$' }]);
    }
    const docId = dto.id ?? randomUUID();
    if (!DOC_ID_PATTERN.test(docId)) {
      throw AppException.validation([{ field: 'id', reason: 'id must match ^[A-Za-z0-9_.:-]{1,128}$' }]);
    }
    const workspace = await this.workspaces.resolve(principal.userId, dto.workspaceId);
    if (workspace.organizationId !== dto.organizationId) {
      throw AppException.validation([{ field: 'organizationId', reason: 'the workspace does not belong to this organization' }]);
    }
    const source = await this.sources.resolve(dto.workspaceId, docType);
    this.access.check(workspace, 'write', source.workspaceId !== dto.workspaceId || source.readOnly);
    const settings = dto.settings ? parseSettings(dto.settings) : {};
    if (dto.metadata) {
      validateFieldDefinitions(dto.metadata.fields ?? [], 'metadata.fields');
      validateFieldDefinitions(dto.metadata.properties ?? [], 'metadata.properties');
    }
    return this.tx.run(async () => {
      if (await this.documents.existsDocId(docType, docId)) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, { details: [{ field: 'id', reason: `document ${docType}/${docId} already exists` }] });
      }
      const document = await this.documents.insert({
        organizationId: workspace.organizationId,
        workspaceId: workspace.workspaceId,
        docType,
        docId,
        title: dto.title ?? null,
        settings,
        createdBy: principal.userId,
      });
      await this.properties.create({ documentUuid: document.uuid, organizationId: document.organizationId, workspaceId: document.workspaceId, userId: principal.userId });
      const metadata = dto.metadata;
      if (metadata && ((Array.isArray(metadata.fields) && metadata.fields.length > 0) || (Array.isArray(metadata.properties) && metadata.properties.length > 0))) {
        const ctx: DocumentContext = { document, access: workspace, readOnly: false, principal };
        const outcome = await this.engine.write(ctx, { apply: true, title: 'Create document' }, async (scope) => {
          const change = await buildMetadataUpdate(scope, { fields: metadata.fields ?? [], properties: metadata.properties ?? [] }, async () => false);
          return change ? [change] : [];
        });
        return toDocumentDto({ ...outcome.document, version: outcome.merge?.revision.version ?? outcome.document.version }, false);
      }
      return toDocumentDto(document, false);
    });
  }

  /**
   * Documents of a type in a workspace. When a data-source reference replaces that type there, the source
   * workspace's documents are listed instead, marked read-only (the caller needs read rights on the source).
   */
  async list(principal: Principal, docType: string, query: { workspaceId: string; page: number; pageSize: number }): Promise<Page<DocumentResponseDto>> {
    if (!DOC_TYPE_PATTERN.test(docType)) {
      throw AppException.validation([{ field: 'docType', reason: 'docType must match ^[A-Za-z0-9_.-]{1,64}$' }]);
    }
    const workspace = await this.workspaces.resolve(principal.userId, query.workspaceId);
    this.access.check(workspace, 'read', false);
    const source = await this.sources.resolve(query.workspaceId, docType);
    let readOnly = source.readOnly;
    if (source.workspaceId !== query.workspaceId) {
      readOnly = true;
      const sourceAccess = await this.workspaces.resolve(principal.userId, source.workspaceId).catch(() => null);
      if (!sourceAccess?.canRead) {
        throw AppException.forbidden('read permission on the source workspace required');
      }
    }
    const { items, total } = await this.documents.listByWorkspace(source.workspaceId, docType, {
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return pageOf(
      items.map((document) => toDocumentDto(document, readOnly)),
      total,
      query,
    );
  }

  async bundle(
    ctx: DocumentContext,
    query: { include?: string; page: number; pageSize: number; revisionsLimit?: number; requestId?: string },
  ): Promise<DocumentBundleDto> {
    const sections = parseInclude(query.include);
    if (sections.has('data') && !ctx.principal.scopes.includes('data:read')) {
      // Asked for explicitly: refuse. Included by default: leave the section out.
      if (query.include !== undefined && query.include.trim() !== '') {
        throw AppException.forbidden('missing scope data:read');
      }
      sections.delete('data');
    }
    const draft = await this.drafts.load(ctx.document, query.requestId);
    const bundle: DocumentBundleDto = { document: toDocumentDto(ctx.document, ctx.readOnly) };
    if (sections.has('metadata')) {
      bundle.metadata = toMetadataDto(draft.metadata, ctx.document.metadataVersion + (draft.folded?.metadata ? 1 : 0));
    }
    if (sections.has('views')) {
      bundle.views = [];
    }
    if (sections.has('data')) {
      bundle.data = await this.rowQueries.page(ctx, draft, query);
    }
    if (sections.has('comments')) {
      bundle.comments = [];
    }
    if (sections.has('revisions')) {
      const limit = query.revisionsLimit ?? DEFAULT_REVISIONS_LIMIT;
      const { items } = limit > 0 ? await this.revisions.list(ctx.document.uuid, { limit, offset: 0 }) : { items: [] };
      bundle.revisions = items.map((revision) => toRevisionDto(revision, ctx.document.metadata));
    }
    if (sections.has('settings')) {
      bundle.settings = toSettingsDto(ctx.document.settings);
    }
    return bundle;
  }

  async remove(ctx: DocumentContext): Promise<DocumentResponseDto> {
    if (ctx.readOnly) {
      throw AppException.forbidden(READ_ONLY_REASON);
    }
    await this.tx.run(async () => {
      const locked = await this.documents.lock(ctx.document.uuid);
      if (locked) {
        await this.documents.softDelete(locked.uuid, ctx.principal.userId);
      }
    });
    return toDocumentDto(ctx.document, ctx.readOnly);
  }
}
