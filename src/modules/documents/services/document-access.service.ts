import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { DocumentSourceService } from '../../tenancy/services/document-source.service.js';
import { type WorkspaceAccess, WorkspaceAccessService } from '../../tenancy/services/workspace-access.service.js';
import type { DocumentRecord } from '../domain/document.records.js';
import { DocumentRepository } from '../repositories/document.repository.js';

export const DOC_TYPE_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const DOC_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

export type DocumentNeed = 'read' | 'write' | 'manage';

/** A document the caller may act on, with what they may do. */
export interface DocumentContext {
  document: DocumentRecord;
  access: WorkspaceAccess;
  /** Served read-only because a data-source reference replaces this document type (see docs/documents.md). */
  readOnly: boolean;
  principal: Principal;
}

export function docNotFound(): AppException {
  return new AppException(ErrorCode.DOC_NOT_FOUND, { details: [{ reason: 'document not found' }] });
}

export const READ_ONLY_REASON = 'the document type is served read-only through a data-source reference';

/**
 * Opens a document for a caller: DOC_NOT_FOUND for unknown documents and for documents in workspaces the caller
 * cannot see (other tenants leak nothing), FORBIDDEN when the role does not allow `need`, and FORBIDDEN for writes
 * to documents a data-source reference makes read-only.
 *
 * Read-only rule (replacement mode): a document is read-only when it is viewed through another workspace whose
 * reference points at the document's workspace (`viaWorkspaceId`), or when its own workspace's documents of that
 * type are currently replaced by a reference (hidden and locked until the reference is paused or removed).
 */
@Injectable()
export class DocumentAccessService {
  constructor(
    private readonly documents: DocumentRepository,
    private readonly workspaces: WorkspaceAccessService,
    private readonly sources: DocumentSourceService,
  ) {}

  async open(principal: Principal, docType: string, docId: string, need: DocumentNeed, viaWorkspaceId?: string): Promise<DocumentContext> {
    if (!DOC_TYPE_PATTERN.test(docType) || !DOC_ID_PATTERN.test(docId)) {
      throw docNotFound();
    }
    const document = await this.documents.find(docType, docId);
    if (!document) {
      throw docNotFound();
    }
    const access = await this.accessTo(principal, document.workspaceId);
    let readOnly = false;
    if (viaWorkspaceId && viaWorkspaceId !== document.workspaceId) {
      await this.accessTo(principal, viaWorkspaceId);
      const source = await this.sources.resolve(viaWorkspaceId, docType);
      if (source.workspaceId !== document.workspaceId) {
        throw docNotFound();
      }
      readOnly = true;
    } else {
      const source = await this.sources.resolve(document.workspaceId, docType);
      readOnly = source.readOnly || source.workspaceId !== document.workspaceId;
    }
    this.check(access, need, readOnly);
    return { document, access, readOnly, principal };
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

  check(access: WorkspaceAccess, need: DocumentNeed, readOnly: boolean): void {
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
}
