import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import {
  DocumentAccessService,
  type DocumentContext,
  type DocumentNeed,
} from '../../documents/services/document-access.service.js';
import type { DocumentRecord } from '../../documents/domain/document.records.js';
import type { PermissionSubjects } from '../../documents/domain/document-settings.js';
import type { OrganizationRole } from '../../tenancy/entities/organization-member.entity.js';
import {
  type OrganizationAccess,
  OrganizationAccessService,
} from '../../tenancy/services/organization-access.service.js';
import type { CatalogRecord, OrderBookRecord } from '../domain/supply-chain.types.js';
import { CatalogRepository } from '../repositories/catalog.repository.js';
import { isUuid } from '../repositories/sql.js';

export const CATALOG_DOC_TYPE = 'catalog';
export const ORDERBOOK_DOC_TYPE = 'orderbook';

export function notFound(what: string): AppException {
  return AppException.notFound(what);
}

/**
 * Who may do what on supply-chain resources (docs/supply-chain.md, "Access"). The organization in the path must
 * be one the caller is an active member of (else NOT_FOUND, like a resource that does not exist); a resource of
 * another organization under that path is NOT_FOUND too. Catalog and order-book rights are those of
 * organization-level documents (every active member reads; owner/admin/member write; owner/admin manage).
 */
@Injectable()
export class SupplyChainAccessService {
  constructor(
    private readonly organizations: OrganizationAccessService,
    private readonly documents: DocumentAccessService,
    private readonly catalogs: CatalogRepository,
  ) {}

  /** Active membership with at least `minimum`; non-members NOT_FOUND, lower roles FORBIDDEN. */
  member(
    principal: Principal,
    organizationId: string,
    minimum: OrganizationRole = 'guest',
  ): Promise<OrganizationAccess> {
    return this.organizations.require(principal.userId, organizationId, minimum);
  }

  /**
   * Deleting a catalog (`DELETE /doc/catalog/{id}`) disables all its connections for good, so it needs what disabling
   * one does: organization owner or admin (else FORBIDDEN, as `POST …/connections/{id}/disable`). Called from the
   * deletion's transaction (SupplyChainModule's DocumentDeletionListeners hook), which the refusal rolls back.
   */
  async requireCatalogDeletion(userId: string, organizationId: string): Promise<void> {
    await this.organizations.require(userId, organizationId, 'admin');
  }

  /** The organizations the caller is an active member of (who holds a share code it may use again). */
  activeOrganizationIds(principal: Principal): Promise<string[]> {
    return this.organizations.activeOrganizationIds(principal.userId);
  }

  async catalog(
    principal: Principal,
    organizationId: string,
    catalogId: string,
    need: DocumentNeed,
  ): Promise<{ catalog: CatalogRecord; ctx: DocumentContext }> {
    await this.member(principal, organizationId);
    const catalog = isUuid(catalogId) ? await this.catalogs.findCatalog(organizationId, catalogId) : null;
    if (!catalog) {
      throw notFound('catalog');
    }
    return { catalog, ctx: await this.open(principal, organizationId, CATALOG_DOC_TYPE, catalog.id, need) };
  }

  async orderBook(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    need: DocumentNeed,
  ): Promise<{ orderBook: OrderBookRecord; ctx: DocumentContext }> {
    await this.member(principal, organizationId);
    const orderBook = isUuid(orderBookId)
      ? await this.catalogs.findOrderBook(organizationId, orderBookId)
      : null;
    if (!orderBook) {
      throw notFound('order book');
    }
    return {
      orderBook,
      ctx: await this.open(principal, organizationId, ORDERBOOK_DOC_TYPE, orderBook.id, need),
    };
  }

  private async open(
    principal: Principal,
    organizationId: string,
    docType: string,
    docId: string,
    need: DocumentNeed,
  ): Promise<DocumentContext> {
    try {
      return await this.documents.open(principal, docType, docId, need, { organizationId });
    } catch (error) {
      if (error instanceof AppException && error.code === ErrorCode.DOC_NOT_FOUND) {
        throw notFound(docType === CATALOG_DOC_TYPE ? 'catalog' : 'order book');
      }
      throw error;
    }
  }

  /**
   * For `GET /catalogs` and `GET /orderbooks`: which of the organization's catalogs (order books) the caller may view,
   * decided by their documents' and the type's `permissions.view` (docs/supply-chain.md, "Routes"): the repository
   * filters with it before paging. Call after member().
   */
  viewNarrowing(principal: Principal, organizationId: string, docType: string): Promise<'all' | 'none' | PermissionSubjects> {
    return this.documents.organizationViewNarrowing(principal, organizationId, docType);
  }

  /**
   * The document of a catalog or order book a list has already admitted the caller to (viewNarrowing): read without
   * a second access check, so a settings change between the two reads cannot refuse the whole list. Null when it was
   * deleted in between (the list leaves it out).
   */
  async listedDocument(principal: Principal, organizationId: string, docType: string, docId: string): Promise<DocumentRecord | null> {
    return (await this.documents.openOrganizationDocumentAsSystem(principal, organizationId, docType, docId))?.document ?? null;
  }

  /** Server-side access to an organization-level document, acting as `userId` (propagation, sync requests). */
  async openAsSystem(
    userId: string,
    organizationId: string,
    docType: string,
    docId: string,
  ): Promise<DocumentContext> {
    const principal: Principal = { userId, kind: 'session', scopes: [] };
    const ctx = await this.documents.openOrganizationDocumentAsSystem(
      principal,
      organizationId,
      docType,
      docId,
    );
    if (!ctx) {
      throw notFound(docType === CATALOG_DOC_TYPE ? 'catalog' : 'order book');
    }
    return ctx;
  }
}
