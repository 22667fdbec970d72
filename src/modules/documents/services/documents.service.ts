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
import { INLINE_CHANGES, toDocumentDto, toMetadataDto, toRevisionDto, toSettingsDto } from '../mappers/document.mapper.js';
import { DocumentRepository } from '../repositories/document.repository.js';
import { PropertiesRepository } from '../repositories/properties.repository.js';
import { RevisionRepository } from '../repositories/revision.repository.js';
import { ComputedFieldsService } from './computed/computed-fields.service.js';
import { ComputedAccessService } from './computed/computed-access.service.js';
import { DocumentDeletionListeners } from './document-deletion-listeners.js';
import { BundleSections } from './bundle-sections.js';
import { assertMetadataKeys, buildMetadataUpdate, parseSettings } from './change-builders.js';
import { ChangeEngineService } from './change-engine.service.js';
import {
  DOC_ID_PATTERN,
  DOC_TYPE_PATTERN,
  DocumentAccessService,
  type DocumentContext,
  type DocumentRights,
  type DocumentScope,
  docNotFound,
  READ_ONLY_REASON,
  rightsOfWorkspace,
} from './document-access.service.js';
import { DraftReadService, draftSettings } from './draft-read.service.js';
import { RowQueryService } from './row-query.service.js';
import { CLIENT_ID_RULE, DOC_TYPE_RULE, isReservedDocumentId } from '../../../common/http/client-ids.js';

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
    private readonly sections: BundleSections,
    private readonly deletionListeners: DocumentDeletionListeners,
    private readonly computed: ComputedFieldsService,
    private readonly computedAccess: ComputedAccessService,
  ) {}

  /**
   * Creates a document in its tenant scope: a workspace, or the organization level (`workspaceId` null). The id
   * is unique within that scope only, and is checked only after the caller's write right there is established,
   * so the answer never depends on documents of scopes the caller cannot write.
   */
  async create(principal: Principal, docType: string, dto: CreateDocumentDto, scope: DocumentScope = {}): Promise<DocumentResponseDto> {
    if (!DOC_TYPE_PATTERN.test(docType)) {
      throw AppException.validation([{ field: 'docType', reason: `docType ${DOC_TYPE_RULE}` }]);
    }
    const docId = dto.id ?? randomUUID();
    if (!DOC_ID_PATTERN.test(docId)) {
      throw AppException.validation([{ field: 'id', reason: `id ${CLIENT_ID_RULE}` }]);
    }
    if (isReservedDocumentId(docId)) {
      throw AppException.validation([{ field: 'id', reason: `"${docId}" names the route /doc/{docType}/${docId}; choose another id` }]);
    }
    if (dto.workspaceId !== undefined && scope.workspaceId && dto.workspaceId !== scope.workspaceId) {
      throw AppException.validation([{ field: 'workspaceId', reason: 'the body and the workspace context (workspaceId / X-Workspace-Id) name different workspaces' }]);
    }
    if (scope.organizationId && dto.organizationId && scope.organizationId !== dto.organizationId.toLowerCase()) {
      throw AppException.validation([{ field: 'organizationId', reason: 'the body and the organization context name different organizations' }]);
    }
    const { workspaceId, organizationId } = await this.creationScope(principal, dto, scope);
    const rights = workspaceId
      ? await this.workspaceRights(principal, docType, workspaceId, organizationId)
      : await this.organizationRights(principal, organizationId);
    const settings = dto.settings ? parseSettings(dto.settings) : {};
    if (dto.metadata) {
      assertMetadataKeys(dto.metadata, 'metadata.');
      validateFieldDefinitions(dto.metadata.fields ?? [], 'metadata.fields');
      validateFieldDefinitions(dto.metadata.properties ?? [], 'metadata.properties');
    }
    return this.tx.run(async () => {
      if (await this.documents.existsInScope(rights.organizationId, rights.workspaceId, docType, docId)) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, { details: [{ field: 'id', reason: `document ${docType}/${docId} already exists here` }] });
      }
      const document = await this.documents.insert({
        organizationId: rights.organizationId,
        workspaceId: rights.workspaceId,
        docType,
        docId,
        title: dto.title ?? null,
        settings,
        createdBy: principal.userId,
      });
      // The approvers are checked against the document as it will be (its workspace, its settings); refused, the
      // transaction rolls the new document back.
      await this.access.assertApproversMayView(document, settings);
      await this.properties.create({ documentUuid: document.uuid, organizationId: document.organizationId, workspaceId: document.workspaceId, userId: principal.userId });
      const metadata = dto.metadata;
      if (metadata && ((Array.isArray(metadata.fields) && metadata.fields.length > 0) || (Array.isArray(metadata.properties) && metadata.properties.length > 0))) {
        const ctx: DocumentContext = { document, access: rights, readOnly: false, principal, viaWorkspaceId: rights.workspaceId };
        const outcome = await this.engine.write(ctx, { creation: true, title: 'Create document' }, async (scope) => {
          const change = await buildMetadataUpdate(scope, { fields: metadata.fields ?? [], properties: metadata.properties ?? [] }, async () => false, 'metadata.');
          return change ? [change] : [];
        });
        return toDocumentDto({ ...outcome.document, version: outcome.merge?.revision.version ?? outcome.document.version }, false);
      }
      return toDocumentDto(document, false);
    });
  }

  /**
   * Where a new document goes. Spec 4.4 names the body fields `id`, `organizationId`, `workspaceId` without making
   * any required: the workspace is the body's (null: organization-level), else the call's context; the organization
   * is the body's or the context's, else the workspace's own. A call naming neither a workspace nor an organization
   * creates in the caller's default workspace, as `GET /doc/{docType}` lists it (`DocumentAccessService.typeScope`).
   */
  private async creationScope(
    principal: Principal,
    dto: CreateDocumentDto,
    scope: DocumentScope,
  ): Promise<{ workspaceId: string | null; organizationId: string | undefined }> {
    const organizationId = dto.organizationId ?? scope.organizationId;
    if (dto.workspaceId !== undefined) {
      return { workspaceId: dto.workspaceId, organizationId };
    }
    if (scope.workspaceId || organizationId) {
      return { workspaceId: scope.workspaceId ?? null, organizationId };
    }
    return { workspaceId: (await this.access.typeScope(principal, scope)).workspaceId ?? null, organizationId };
  }

  /** Write rights in a workspace for a new document; refused while a data-source reference makes the type read-only there. */
  private async workspaceRights(principal: Principal, docType: string, workspaceId: string, organizationId: string | undefined): Promise<DocumentRights> {
    const workspace = await this.workspaces.resolve(principal.userId, workspaceId);
    if (organizationId !== undefined && workspace.organizationId !== organizationId.toLowerCase()) {
      throw AppException.validation([{ field: 'organizationId', reason: 'the workspace does not belong to this organization' }]);
    }
    const source = await this.sources.resolve(workspaceId, docType);
    const rights = rightsOfWorkspace(workspace);
    this.access.check(rights, 'write', source.workspaceId !== workspaceId || source.readOnly);
    return rights;
  }

  private async organizationRights(principal: Principal, organizationId: string | undefined): Promise<DocumentRights> {
    if (organizationId === undefined) {
      throw AppException.validation([
        { field: 'organizationId', reason: 'organizationId is required for an organization-level document (or name a workspace: workspaceId, or the X-Workspace-Id header)' },
      ]);
    }
    const access = await this.workspaces.resolveOrganizationLevel(principal.userId, organizationId);
    const rights: DocumentRights = { ...access, workspaceId: null, archived: false };
    this.access.check(rights, 'write', false);
    return rights;
  }

  /**
   * Documents of a type in a context. Workspace context: the workspace's own documents and its organization's
   * organization-level documents; when a data-source reference replaces the type there, the source workspace's
   * documents only, marked read-only (the caller needs read rights on the source). Organization context: the
   * organization-level documents. A context is required.
   */
  async list(principal: Principal, docType: string, query: { page: number; pageSize: number }, scope: DocumentScope): Promise<Page<DocumentResponseDto>> {
    if (!DOC_TYPE_PATTERN.test(docType)) {
      throw AppException.validation([{ field: 'docType', reason: `docType ${DOC_TYPE_RULE}` }]);
    }
    const paging = { limit: query.pageSize, offset: (query.page - 1) * query.pageSize };
    scope = await this.access.typeScope(principal, scope);
    if (scope.workspaceId) {
      const workspace = await this.workspaces.resolve(principal.userId, scope.workspaceId);
      if (scope.organizationId && scope.organizationId !== workspace.organizationId) {
        throw AppException.notFound('workspace');
      }
      this.access.check(rightsOfWorkspace(workspace), 'read', false);
      const served = await this.access.servingWorkspace(principal, workspace, docType);
      const { items, total } = await this.documents.listInScope(
        { workspaceId: served.access.workspaceId, organizationId: served.readOnly ? null : workspace.organizationId },
        docType,
        paging,
      );
      return pageOf(
        items.map((document) => toDocumentDto(document, served.readOnly)),
        total,
        query,
      );
    }
    if (scope.organizationId) {
      const access = await this.workspaces.resolveOrganizationLevel(principal.userId, scope.organizationId);
      this.access.check({ ...access, workspaceId: null, archived: false }, 'read', false);
      const { items, total } = await this.documents.listInScope({ workspaceId: null, organizationId: scope.organizationId }, docType, paging);
      return pageOf(
        items.map((document) => toDocumentDto(document, false)),
        total,
        query,
      );
    }
    throw AppException.validation([
      { field: 'workspaceId', reason: 'the caller has no default workspace: name the context, workspaceId (or the X-Workspace-Id header), or organizationId for organization-level documents' },
    ]);
  }

  /**
   * The bundle. Every section is read in one REPEATABLE READ, read-only transaction, from the document row on: the
   * sections show one committed state, never a mix of before and after a concurrent merge. Views and comments come
   * from the modules that own them (BundleSections), inside the same snapshot.
   */
  async bundle(
    ctx: DocumentContext,
    query: { include?: string; page: number; pageSize: number; revisionsLimit?: number; requestId?: string; viewId?: string; commentsLimit?: number },
  ): Promise<DocumentBundleDto> {
    const sections = parseInclude(query.include);
    if (sections.has('data') && !ctx.principal.scopes.includes('data:read')) {
      // Asked for explicitly: refuse. Included by default: leave the section out.
      if (query.include !== undefined && query.include.trim() !== '') {
        throw AppException.forbidden('missing scope data:read');
      }
      sections.delete('data');
    }
    return this.tx.run(async () => {
      await this.tx.manager.query('SET TRANSACTION READ ONLY');
      const document = await this.documents.findByUuid(ctx.document.uuid);
      if (!document) {
        throw docNotFound();
      }
      const snapshot: DocumentContext = { ...ctx, document };
      const draft = await this.drafts.load(document, query.requestId);
      const bundle: DocumentBundleDto = { document: toDocumentDto(document, ctx.readOnly) };
      if (sections.has('metadata')) {
        bundle.metadata = toMetadataDto(draft.metadata, document.metadataVersion + (draft.folded?.metadata ? 1 : 0));
      }
      if (sections.has('views')) {
        bundle.views = await this.sections.read('views', snapshot, query);
      }
      if (sections.has('data')) {
        bundle.data = await this.rowQueries.page(snapshot, draft, query);
      }
      if (sections.has('comments')) {
        bundle.comments = await this.sections.read('comments', snapshot, query);
      }
      if (sections.has('revisions')) {
        const limit = query.revisionsLimit ?? DEFAULT_REVISIONS_LIMIT;
        const { items } = limit > 0 ? await this.revisions.list(document.uuid, { limit, offset: 0 }) : { items: [] };
        const operations = await this.revisions.firstOperationsOf(items.map((revision) => revision.id), INLINE_CHANGES.listed);
        const mask = await this.computedAccess.historyMask(snapshot);
        bundle.revisions = items.map((revision) => toRevisionDto(revision, document.metadata, (operations.get(revision.id) ?? []).map((op) => mask.operation(op))));
      }
      if (sections.has('settings')) {
        // With requestId the draft's, as the other sections show it (a request may change the settings).
        bundle.settings = toSettingsDto(draftSettings(document, draft.folded));
      }
      return bundle;
    }, 'REPEATABLE READ');
  }

  async remove(ctx: DocumentContext): Promise<DocumentResponseDto> {
    if (ctx.readOnly) {
      throw AppException.forbidden(READ_ONLY_REASON);
    }
    await this.tx.run(async () => {
      const locked = await this.documents.lock(ctx.document.uuid);
      if (!locked) {
        // Deleted meanwhile (two deletes at once): the one that waited answers as a delete after it would.
        throw docNotFound();
      }
      await this.documents.softDelete(locked.uuid, ctx.principal.userId);
      // Lookups of other documents reading this one go empty in the same transaction (docs/formulas.md).
      await this.computed.afterDocumentDeleted(locked, ctx.principal.userId);
      await this.deletionListeners.notify(locked, ctx.principal.userId);
    });
    return toDocumentDto(ctx.document, ctx.readOnly);
  }
}
