import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { UsersService } from '../../identity/services/users.service.js';
import { DocumentSourceService } from '../../tenancy/services/document-source.service.js';
import { OrganizationAccessService } from '../../tenancy/services/organization-access.service.js';
import { type OrganizationLevelAccess, type WorkspaceAccess, WorkspaceAccessService } from '../../tenancy/services/workspace-access.service.js';
import type { EventDocument } from '../../events/domain-event.js';
import type { DocumentRecord, DocumentSettings, RowRecord } from '../domain/document.records.js';
import type { PermissionSubjects } from '../domain/document-settings.js';
import { DocumentRepository } from '../repositories/document.repository.js';
import { DocumentSettingsPolicy } from './document-settings.policy.js';
import { CLIENT_ID_PATTERN, DOC_TYPE_PATTERN } from '../../../common/http/client-ids.js';

export { DOC_TYPE_PATTERN };
export const DOC_ID_PATTERN = CLIENT_ID_PATTERN;

export type DocumentNeed = 'read' | 'write' | 'manage';

/**
 * The tenant a `/doc/...` call names (docs/documents.md, "Workspace context"): a workspace (query `workspaceId`
 * or header `X-Workspace-Id`), or an organization's organization-level documents (query `organizationId` or header
 * `X-Organization-Id`), or nothing (the document is looked up among everything the caller can read).
 */
export interface DocumentScope {
  workspaceId?: string;
  organizationId?: string;
}

/** What the caller may do with one document: its workspace's rights, or the organization-level rights. */
export interface DocumentRights {
  organizationId: string;
  /** Null for organization-level documents. */
  workspaceId: string | null;
  archived: boolean;
  canRead: boolean;
  canWrite: boolean;
  canManage: boolean;
  isOrganizationAdmin: boolean;
}

/** A document the caller may act on, with what they may do. */
export interface DocumentContext {
  document: DocumentRecord;
  access: DocumentRights;
  /** Served read-only because a data-source reference replaces this document type (see docs/documents.md). */
  readOnly: boolean;
  principal: Principal;
  /** The workspace the document was addressed through (the context), when there was one. */
  viaWorkspaceId: string | null;
  /** The row named by the route, read with the document in the same statement (`GET /data/{rowId}`); null: no such row. */
  prefetched?: { rowId: string; row: RowRecord | null };
}

/** Changes to a document's structure: they need manage rights however they are written. */
const STRUCTURE_CHANGES: ReadonlySet<string> = new Set(['metadata-update', 'field-create', 'field-update', 'field-delete', 'settings-update']);

/**
 * FORBIDDEN when `changeTypes` hold a metadata or settings change and the caller may not manage the document:
 * `PUT /metadata` and `PUT /settings` need manage rights (spec 4.4), and so do the same changes sent as a
 * request's `changes` or produced by a revert.
 */
export function assertMayChangeStructure(ctx: DocumentContext, changeTypes: Iterable<string>): void {
  for (const type of changeTypes) {
    if (STRUCTURE_CHANGES.has(type) && !ctx.access.canManage) {
      throw AppException.forbidden(`manage permission required for ${type}`);
    }
  }
}

/** Changes that delete document content: `permissions.delete` applies to whoever records them (docs/settings.md). */
const DELETIONS: ReadonlySet<string> = new Set(['row-delete', 'property-delete']);

export function docNotFound(): AppException {
  return new AppException(ErrorCode.DOC_NOT_FOUND, { details: [{ reason: 'document not found' }] });
}

export const READ_ONLY_REASON = 'the document type is served read-only through a data-source reference';
export const SOURCE_READ_REASON = 'read permission on the source workspace required';

/** Readable candidates an AMBIGUOUS_DOCUMENT answer lists at most; the lookup stops once it has found this many. */
const MAX_CANDIDATES = 25;

/** Candidates read per statement while a lookup without context looks for readable ones. */
const CANDIDATE_BATCH = 100;

export function rightsOfWorkspace(access: WorkspaceAccess): DocumentRights {
  return {
    organizationId: access.organizationId,
    workspaceId: access.workspaceId,
    archived: access.archived,
    canRead: access.canRead,
    canWrite: access.canWrite,
    canManage: access.canManage,
    isOrganizationAdmin: access.isOrganizationAdmin,
  };
}

/** Rights on an organization's organization-level documents (they have no workspace and are never archived). */
export function rightsOfOrganizationLevel(access: OrganizationLevelAccess): DocumentRights {
  return { ...access, workspaceId: null, archived: false };
}

/**
 * Opens a document for a caller. Identity is tenant-scoped: `(workspace, docType, docId)`, or `(organization,
 * docType, docId)` for organization-level documents. Rules (docs/documents.md):
 * - Workspace context W: W's data-source reference for the type, if active, serves the source workspace's
 *   document read-only (W's own is hidden); otherwise W's own document; otherwise the organization-level document
 *   of W's organization. A workspace the caller cannot see answers DOC_NOT_FOUND before any document lookup, so
 *   nothing about its documents leaks.
 * - Organization context O: the organization-level document of O.
 * - No context: every document with that type and id in the caller's organizations that the caller can read and
 *   that is not hidden by a reference. One → it; none → DOC_NOT_FOUND; several → 409 AMBIGUOUS_DOCUMENT listing
 *   each candidate's `organizationId` and `workspaceId` (all readable by the caller, so nothing leaks).
 * Then FORBIDDEN when the role does not allow `need`, or for writes to a document served read-only.
 */
@Injectable()
export class DocumentAccessService {
  constructor(
    private readonly documents: DocumentRepository,
    private readonly workspaces: WorkspaceAccessService,
    private readonly organizations: OrganizationAccessService,
    private readonly sources: DocumentSourceService,
    private readonly settingsPolicy: DocumentSettingsPolicy,
    private readonly users: UsersService,
  ) {}

  /**
   * The context of a type-level call (`GET /doc/{docType}`, `GET/PUT /doc/{docType}/setting`), which the spec
   * writes without parameters: the one the call names, else the caller's default workspace (`GET /users/me`
   * `defaultWorkspaceId`), else none (the caller then gets VALIDATION_ERROR asking for one).
   */
  async typeScope(principal: Principal, scope: DocumentScope): Promise<DocumentScope> {
    if (scope.workspaceId || scope.organizationId) {
      return scope;
    }
    const defaultWorkspaceId = (await this.users.findById(principal.userId))?.defaultWorkspaceId;
    return defaultWorkspaceId ? { ...scope, workspaceId: defaultWorkspaceId } : scope;
  }

  /** `prefetchRowId`: also read this row with the document where one statement can (reads in a workspace context). */
  async open(
    principal: Principal,
    docType: string,
    docId: string,
    need: DocumentNeed,
    scope: DocumentScope = {},
    prefetchRowId?: string,
  ): Promise<DocumentContext> {
    if (!DOC_TYPE_PATTERN.test(docType) || !DOC_ID_PATTERN.test(docId)) {
      throw docNotFound();
    }
    const ctx = scope.workspaceId
      ? await this.openInWorkspace(principal, docType, docId, scope.workspaceId, scope.organizationId, prefetchRowId)
      : scope.organizationId
        ? await this.openInOrganization(principal, docType, docId, scope.organizationId)
        : await this.openWithoutContext(principal, docType, docId);
    this.check(ctx.access, need, ctx.readOnly);
    await this.narrowBySettings(ctx, need);
    return ctx;
  }

  /**
   * Server-side work for an organization (supply-chain propagation, order-book sync requests, connectors): the
   * organization-level document `docType/docId` of `organizationId` with full rights, acting as `principal`
   * (recorded as author). No membership check: the calling service has decided that the work is allowed.
   * Null when the document does not exist.
   */
  async openOrganizationDocumentAsSystem(principal: Principal, organizationId: string, docType: string, docId: string): Promise<DocumentContext | null> {
    if (!DOC_TYPE_PATTERN.test(docType) || !DOC_ID_PATTERN.test(docId)) {
      return null;
    }
    const document = await this.documents.findOrganizationLevel(organizationId, docType, docId);
    if (!document) {
      return null;
    }
    const access: DocumentRights = { organizationId, workspaceId: null, archived: false, canRead: true, canWrite: true, canManage: true, isOrganizationAdmin: true };
    return { document, access, readOnly: false, principal, viaWorkspaceId: null };
  }

  /**
   * The document's and its type's `permissions` settings narrow the role's rights, never widen them
   * (docs/settings.md): reads need `view`, writes `view` and `edit`, DELETE requests also `delete` (the access guard
   * asks). A write needs `view` too because the write right is built on the read right, and every write answers with
   * what it wrote: a partial row update answered the whole stored row to an editor the list shut out of reading it.
   * Managers are never narrowed, so they can always repair the settings.
   */
  async narrowBySettings(ctx: DocumentContext, need: DocumentNeed | 'delete'): Promise<void> {
    if (need === 'manage') {
      return;
    }
    if (need === 'write') {
      await this.settingsPolicy.assertMay(ctx, 'view');
    }
    await this.settingsPolicy.assertMay(ctx, need === 'read' ? 'view' : need === 'write' ? 'edit' : 'delete');
  }

  /**
   * FORBIDDEN when `changeTypes` delete rows or properties and the settings' `permissions.delete` does not admit the
   * caller. The DELETE routes are asked by the access guard; a deletion recorded another way (`POST /requests`
   * changes, a batch route, a revert undoing row creations) is asked here, or the setting could be bypassed. Who
   * merges such a request later is not asked again: the deletion was allowed when it was recorded.
   */
  async assertMayRecordDeletions(ctx: DocumentContext, changeTypes: Iterable<string>): Promise<void> {
    for (const type of changeTypes) {
      if (DELETIONS.has(type)) {
        await this.narrowBySettings(ctx, 'delete');
        return;
      }
    }
  }

  /**
   * Where documents of `docType` are served for a workspace context: the source workspace of an active
   * reference (read-only; the caller must be able to read it), else the workspace itself.
   */
  async servingWorkspace(principal: Principal, access: WorkspaceAccess, docType: string): Promise<{ access: WorkspaceAccess; readOnly: boolean }> {
    const source = await this.sources.resolve(access.workspaceId, docType);
    if (source.workspaceId === access.workspaceId) {
      return { access, readOnly: false };
    }
    const sourceAccess = await this.workspaces.resolve(principal.userId, source.workspaceId).catch(() => null);
    if (!sourceAccess?.canRead) {
      throw AppException.forbidden(SOURCE_READ_REASON);
    }
    await this.settingsPolicy.assertReferencesAllowed({ organizationId: sourceAccess.organizationId, workspaceId: sourceAccess.workspaceId }, docType);
    return { access: sourceAccess, readOnly: true };
  }

  /**
   * Whether another user may view the document (an approver, a mentioned user): read rights where it lives,
   * narrowed by its and its type's `permissions.view` settings, as the access guard narrows a caller's.
   */
  async mayView(document: DocumentRecord, userId: string): Promise<boolean> {
    let rights: DocumentRights;
    try {
      rights = await this.rightsWhereItLives(document, userId);
    } catch (error) {
      // Not a member (NOT_FOUND, FORBIDDEN): no view. Anything else is a failure, not an answer.
      if (error instanceof AppException && (error.code === ErrorCode.NOT_FOUND || error.code === ErrorCode.FORBIDDEN)) {
        return false;
      }
      throw error;
    }
    return rights.canRead && (await this.settingsPolicy.admitsUser(document, rights, userId, 'view'));
  }

  /**
   * `workflow.approvers` of settings about to be written (docs/settings.md): each must be a user who may view the
   * document under those settings (mayView; managers always may). Anyone else — an unknown id, a non-member, someone
   * `permissions.view` shuts out — could never decide, and under `requiresApproval` requests would wait for them:
   * VALIDATION_ERROR naming each `workflow.approvers[i]`.
   */
  async assertApproversMayView(document: DocumentRecord, settings: DocumentSettings): Promise<void> {
    const approvers: unknown = settings.workflow?.approvers;
    if (!Array.isArray(approvers) || approvers.length === 0) {
      return;
    }
    const governed: DocumentRecord = { ...document, settings };
    const problems: { field: string; reason: string }[] = [];
    for (const [index, id] of approvers.entries()) {
      if (typeof id !== 'string' || !(await this.mayView(governed, id.toLowerCase()))) {
        problems.push({ field: `workflow.approvers[${index}]`, reason: 'not a user who can read the document' });
      }
    }
    if (problems.length > 0) {
      throw AppException.validation(problems);
    }
  }

  /** Whether `userId` may manage `document` where it lives (change its settings); false for a non-member. */
  async mayManage(document: DocumentRecord, userId: string): Promise<boolean> {
    try {
      return (await this.rightsWhereItLives(document, userId)).canManage;
    } catch (error) {
      if (error instanceof AppException && (error.code === ErrorCode.NOT_FOUND || error.code === ErrorCode.FORBIDDEN)) {
        return false;
      }
      throw error;
    }
  }

  /**
   * Refuses `userId` a document they reach without opening it — the rows a relation field value names — with the
   * answer a read through open() (POST /relations' target) gives: DOC_NOT_FOUND when its workspace is not theirs,
   * FORBIDDEN without read rights or when its or its type's `permissions.view` shuts them out.
   */
  async assertMayRead(document: DocumentRecord, userId: string): Promise<void> {
    let rights: DocumentRights;
    try {
      rights = await this.rightsWhereItLives(document, userId);
    } catch (error) {
      if (error instanceof AppException && error.code === ErrorCode.NOT_FOUND) {
        throw docNotFound();
      }
      throw error;
    }
    this.check(rights, 'read', false);
    await this.settingsPolicy.assertUserMay(document, rights, userId, 'view');
  }

  /**
   * Who of an organization's organization-level documents of `docType` the caller may view, for lists that filter in
   * SQL before paging (`GET /catalogs`, `GET /orderbooks`): the same rule as mayView — read rights in the organization
   * (the same for every such document), then the type's and each document's `permissions.view`. `all`: nothing
   * narrows (managers); `none`: no read rights, or the type's list shuts the caller out; else the subjects each
   * document's list must hold (settings-sql.ts).
   */
  async organizationViewNarrowing(principal: Principal, organizationId: string, docType: string): Promise<'all' | 'none' | PermissionSubjects> {
    const rights = await this.organizationRights(principal, organizationId);
    if (!rights.canRead) {
      return 'none';
    }
    return this.settingsPolicy.typeNarrowing({ organizationId, workspaceId: null }, docType, rights, principal.userId, 'view');
  }

  /**
   * mayView for every document of the given types in one scope (a workspace, or an organization's organization-level
   * documents) at once, for lists that filter in SQL before paging (GET …/relations): read rights there are resolved
   * once, each type's `permissions.view` once per type. Per type: `all` when nothing narrows (managers), `none` when
   * the caller may not read there (not a member, no read rights) or the type's list shuts them out, else the subjects
   * each document's own list must hold (settings-sql.ts).
   */
  async viewNarrowingIn(
    userId: string,
    scope: { organizationId: string; workspaceId: string | null },
    docTypes: readonly string[],
  ): Promise<Map<string, 'all' | 'none' | PermissionSubjects>> {
    const answers = new Map<string, 'all' | 'none' | PermissionSubjects>();
    let rights: DocumentRights;
    try {
      rights = await this.rightsIn(scope, userId);
    } catch (error) {
      // As mayView: not a member (NOT_FOUND, FORBIDDEN) is no view; anything else is a failure, not an answer.
      if (error instanceof AppException && (error.code === ErrorCode.NOT_FOUND || error.code === ErrorCode.FORBIDDEN)) {
        docTypes.forEach((docType) => answers.set(docType, 'none'));
        return answers;
      }
      throw error;
    }
    for (const docType of docTypes) {
      answers.set(docType, rights.canRead ? await this.settingsPolicy.typeNarrowing(scope, docType, rights, userId, 'view') : 'none');
    }
    return answers;
  }

  /** A user's rights where the document lives: its workspace, or its organization for organization-level ones. */
  private async rightsWhereItLives(document: DocumentRecord, userId: string): Promise<DocumentRights> {
    return this.rightsIn(document, userId);
  }

  /** A user's rights in a workspace, or on an organization's organization-level documents (workspaceId null). */
  private async rightsIn(scope: { organizationId: string; workspaceId: string | null }, userId: string): Promise<DocumentRights> {
    return scope.workspaceId === null
      ? rightsOfOrganizationLevel(await this.workspaces.resolveOrganizationLevel(userId, scope.organizationId))
      : rightsOfWorkspace(await this.workspaces.resolve(userId, scope.workspaceId));
  }

  /**
   * The live document an event names, looked up in its own tenant with no caller and no access check: for
   * subscribers that then ask mayView for someone (a webhook's creator). Null once it is deleted.
   */
  async findEventDocument(ref: EventDocument): Promise<DocumentRecord | null> {
    const document = ref.workspaceId
      ? await this.documents.findInWorkspace(ref.workspaceId, ref.docType, ref.docId)
      : await this.documents.findOrganizationLevel(ref.organizationId, ref.docType, ref.docId);
    return document?.organizationId === ref.organizationId ? document : null;
  }

  /** The caller's access to a workspace; a workspace of another tenant is reported as a missing document. */
  async accessTo(principal: Principal, workspaceId: string): Promise<WorkspaceAccess> {
    try {
      return await this.workspaces.resolve(principal.userId, workspaceId);
    } catch (error) {
      if (error instanceof AppException && error.code === ErrorCode.NOT_FOUND) {
        throw docNotFound();
      }
      throw error;
    }
  }

  /** The caller's rights on an organization's organization-level documents; a foreign organization is a missing document. */
  async organizationRights(principal: Principal, organizationId: string): Promise<DocumentRights> {
    try {
      return rightsOfOrganizationLevel(await this.workspaces.resolveOrganizationLevel(principal.userId, organizationId));
    } catch (error) {
      if (error instanceof AppException && error.code === ErrorCode.NOT_FOUND) {
        throw docNotFound();
      }
      throw error;
    }
  }

  check(access: DocumentRights, need: DocumentNeed, readOnly: boolean): void {
    if (!access.canRead) {
      throw AppException.forbidden('read permission required');
    }
    if (need === 'read') {
      return;
    }
    if (readOnly) {
      throw AppException.forbidden(READ_ONLY_REASON);
    }
    if (need === 'write' && !access.canWrite) {
      throw AppException.forbidden(access.archived ? 'workspace is archived' : 'write permission required');
    }
    if (need === 'manage' && !access.canManage) {
      throw AppException.forbidden(access.archived ? 'workspace is archived' : 'manage permission required');
    }
  }

  private async openInWorkspace(
    principal: Principal,
    docType: string,
    docId: string,
    workspaceId: string,
    organizationId?: string,
    prefetchRowId?: string,
  ): Promise<DocumentContext> {
    const access = await this.accessTo(principal, workspaceId);
    if (organizationId && organizationId !== access.organizationId) {
      throw docNotFound();
    }
    if (!access.canRead) {
      throw AppException.forbidden('read permission required');
    }
    const served = await this.servingWorkspace(principal, access, docType);
    if (prefetchRowId !== undefined) {
      const found = await this.documents.findInWorkspaceWithRow(served.access.workspaceId, docType, docId, prefetchRowId);
      if (found) {
        const { document, row } = found;
        const prefetched = { rowId: prefetchRowId, row };
        return { document, access: rightsOfWorkspace(served.access), readOnly: served.readOnly, principal, viaWorkspaceId: workspaceId, prefetched };
      }
    } else {
      const document = await this.documents.findInWorkspace(served.access.workspaceId, docType, docId);
      if (document) {
        return { document, access: rightsOfWorkspace(served.access), readOnly: served.readOnly, principal, viaWorkspaceId: workspaceId };
      }
    }
    if (!served.readOnly) {
      // Not replaced: the organization's organization-level documents are visible from each of its workspaces.
      const orgDocument = await this.documents.findOrganizationLevel(access.organizationId, docType, docId);
      if (orgDocument) {
        return { document: orgDocument, access: await this.organizationRights(principal, access.organizationId), readOnly: false, principal, viaWorkspaceId: workspaceId };
      }
    }
    throw docNotFound();
  }

  private async openInOrganization(principal: Principal, docType: string, docId: string, organizationId: string): Promise<DocumentContext> {
    const rights = await this.organizationRights(principal, organizationId);
    // As in a workspace context: a member without read rights (suspended) is refused before any document is looked
    // up, so the answer does not tell an existing organization-level document from a free id.
    if (!rights.canRead) {
      throw AppException.forbidden('read permission required');
    }
    const document = await this.documents.findOrganizationLevel(organizationId, docType, docId);
    if (!document) {
      throw docNotFound();
    }
    return { document, access: rights, readOnly: false, principal, viaWorkspaceId: null };
  }

  private async openWithoutContext(principal: Principal, docType: string, docId: string): Promise<DocumentContext> {
    const organizationIds = await this.organizations.activeOrganizationIds(principal.userId);
    // Every candidate is checked until enough readable ones are found: a cap on the candidates read (readable or
    // not) let documents in workspaces the caller cannot read crowd out the one they can (DOC_NOT_FOUND instead of
    // it), an answer that depended on what the caller cannot see.
    const readable: DocumentContext[] = [];
    let after: string | undefined;
    while (readable.length < MAX_CANDIDATES) {
      const candidates = await this.documents.findInOrganizations(organizationIds, docType, docId, CANDIDATE_BATCH, after);
      // The access to every candidate's workspace in one statement: unreadable candidates cost no query each.
      const accesses = await this.workspaces.resolveMany(
        principal.userId,
        candidates.flatMap((document) => (document.workspaceId === null ? [] : [document.workspaceId])),
      );
      for (const document of candidates) {
        const ctx = readable.length < MAX_CANDIDATES ? await this.readableWithoutContext(principal, document, accesses) : null;
        if (ctx) {
          readable.push(ctx);
        }
      }
      if (candidates.length < CANDIDATE_BATCH) {
        break;
      }
      after = candidates[candidates.length - 1]?.uuid;
    }
    if (readable.length === 1) {
      return readable[0] as DocumentContext;
    }
    if (readable.length === 0) {
      throw docNotFound();
    }
    throw new AppException(ErrorCode.AMBIGUOUS_DOCUMENT, {
      details: [{ reason: 'several documents you can read have this type and id; name the workspace with workspaceId or X-Workspace-Id' }],
      payload: {
        docType,
        docId,
        candidates: readable.map((ctx) => ({ organizationId: ctx.document.organizationId, workspaceId: ctx.document.workspaceId })),
      },
    });
  }

  /** A candidate of a lookup without context, if the caller can read it directly and no reference hides it. */
  private async readableWithoutContext(
    principal: Principal,
    document: DocumentRecord,
    accesses: ReadonlyMap<string, WorkspaceAccess>,
  ): Promise<DocumentContext | null> {
    if (document.workspaceId === null) {
      const rights = await this.workspaces.resolveOrganizationLevel(principal.userId, document.organizationId).catch(() => null);
      return rights?.canRead ? { document, access: { ...rights, workspaceId: null, archived: false }, readOnly: false, principal, viaWorkspaceId: null } : null;
    }
    const access = accesses.get(document.workspaceId);
    if (!access?.canRead) {
      return null;
    }
    const source = await this.sources.resolve(document.workspaceId, document.docType);
    if (source.workspaceId !== document.workspaceId) {
      // Hidden while a data-source reference replaces this type in its workspace.
      return null;
    }
    return { document, access: rightsOfWorkspace(access), readOnly: false, principal, viaWorkspaceId: null };
  }
}
