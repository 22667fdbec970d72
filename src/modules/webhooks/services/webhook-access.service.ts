import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentRecord } from '../../documents/domain/document.records.js';
import { DocumentAccessService } from '../../documents/services/document-access.service.js';
import { UsersService } from '../../identity/services/users.service.js';
import { OrganizationAccessService } from '../../tenancy/services/organization-access.service.js';
import { WorkspaceAccessService } from '../../tenancy/services/workspace-access.service.js';
import { WebhookRepository, type WebhookRow } from '../repositories/webhook.repository.js';

const MANAGER_ROLES = new Set(['owner', 'admin']);

/** Where an event (or a delivery of one) happened: its tenant, and the document it names, if any. */
export interface EventPlace {
  organizationId: string;
  workspaceId: string | null;
  docType: string | null;
  docId: string | null;
}

/**
 * Who may manage which webhook, and whether a webhook's creator may still read an event's document.
 * A webhook of an organization is managed by its creator (while an active member) and by the organization's active
 * owners and admins; members of the organization who are neither get FORBIDDEN; everyone else NOT_FOUND.
 * An all-organizations webhook (created without an organization) carries the events of every organization its
 * creator is in, so it belongs to its creator alone: no one else finds it (an admin of the organization it was
 * created in would otherwise read — or redirect — the events of the creator's other organizations), and the creator
 * manages it whatever their memberships, also after leaving that organization or its archiving.
 */
@Injectable()
export class WebhookAccessService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly documents: DocumentAccessService,
    private readonly organizations: OrganizationAccessService,
    private readonly workspaces: WorkspaceAccessService,
    private readonly users: UsersService,
    private readonly webhooks: WebhookRepository,
  ) {}

  /**
   * The organization a create call acts in: `organizationId` of the body, else the X-Organization-Id header, else
   * the caller's default organization (issue 12).
   * The caller must be an active member (unknown or foreign organizations are NOT_FOUND).
   */
  async organizationFor(
    principal: Principal,
    explicit: string | undefined,
    header: string | undefined,
  ): Promise<{ organizationId: string; isManager: boolean }> {
    const named = await this.namedOrDefaultOrganization(principal, explicit, header);
    if (!named.organizationId) {
      throw AppException.validation([
        {
          field: 'organizationId',
          reason: 'no organization given and the caller has no default organization',
        },
      ]);
    }
    const access = await this.organizations.require(principal.userId, named.organizationId.toLowerCase());
    return {
      organizationId: access.organizationId,
      isManager: MANAGER_ROLES.has(access.role),
    };
  }

  /**
   * The organization a list call shows, as for create; null when none is named and the caller has no default
   * organization (left or archived: only their own all-organizations webhooks are listed then, so they can still
   * find them).
   */
  async listedOrganization(
    principal: Principal,
    explicit: string | undefined,
    header: string | undefined,
  ): Promise<{ organizationId: string; isManager: boolean } | null> {
    const named = await this.namedOrDefaultOrganization(principal, explicit, header);
    if (!named.organizationId) {
      return null;
    }
    const access = await this.organizations.require(principal.userId, named.organizationId.toLowerCase());
    return { organizationId: access.organizationId, isManager: MANAGER_ROLES.has(access.role) };
  }

  /** Creating needs an active membership above guest. */
  async requireCreator(principal: Principal, organizationId: string): Promise<void> {
    await this.organizations.require(principal.userId, organizationId, 'member');
  }

  /** The webhook if the caller may manage it (see the class comment); `lock` for changes. */
  async manageable(principal: Principal, webhookId: string, lock = false): Promise<WebhookRow> {
    const organizationIds = await this.organizations.activeOrganizationIds(principal.userId);
    // An all-organizations webhook is found by its creator only (the repository's rule).
    const webhook = isUuid(webhookId)
      ? await this.webhooks.findReachable(webhookId, principal.userId, organizationIds, lock)
      : null;
    if (!webhook) {
      throw AppException.notFound('webhook');
    }
    if (webhook.createdBy === principal.userId) {
      return webhook;
    }
    const access = await this.organizations.find(principal.userId, webhook.organizationId);
    if (!access || access.status !== 'active' || !MANAGER_ROLES.has(access.role)) {
      throw AppException.forbidden(
        "only the webhook's creator and the organization's owners and admins manage it",
      );
    }
    return webhook;
  }

  /**
   * Whether the webhook's creator may read the event now, exactly as a read of its document would decide
   * (asked when it is queued, before every attempt, and before its body is shown): an event of a document needs
   * DocumentAccessService.mayView — read rights where the document lives, narrowed by its and its type's
   * `permissions.view` settings; a document that no longer exists is read by no one — nor is it brought back by a
   * document created after `asOf`, the event's recorded time, with its id (namesLaterDocument). An event without a
   * document follows the
   * workspace rules, or needs an active membership of its organization when it names no workspace.
   */
  async creatorMayRead(createdBy: string, place: EventPlace, asOf?: Date): Promise<boolean> {
    const { organizationId, workspaceId, docType, docId } = place;
    if (docType !== null && docId !== null) {
      const document = await this.eventDocument({ organizationId, workspaceId, docType, docId });
      if (document === null || (asOf !== undefined && isLaterDocument(document, asOf))) {
        return false;
      }
      return this.documents.mayView(document, createdBy);
    }
    try {
      if (workspaceId) {
        const access = await this.workspaces.resolve(createdBy, workspaceId);
        return access.organizationId === organizationId && access.canRead;
      }
      return (await this.workspaces.resolveOrganizationLevel(createdBy, organizationId)).canRead;
    } catch (error) {
      if (error instanceof AppException) {
        return false;
      }
      throw error;
    }
  }

  /**
   * True when the event names a document created after `asOf`, the time the outbox recorded the event (never the
   * creation of a delivery queued for it: see isLaterDocument): a later document that reuses the id of the event's
   * document, deleted since (docs/documents.md). Its events and deliveries are the deleted document's, which no one
   * reads any more.
   */
  async namesLaterDocument(place: EventPlace, asOf: Date): Promise<boolean> {
    const { organizationId, workspaceId, docType, docId } = place;
    if (docType === null || docId === null) {
      return false;
    }
    const document = await this.eventDocument({ organizationId, workspaceId, docType, docId });
    return document !== null && isLaterDocument(document, asOf);
  }

  /**
   * `organizationId` of the body or query, else the X-Organization-Id header (both given and different:
   * VALIDATION_ERROR), else the caller's default organization; undefined when there is none.
   */
  private async namedOrDefaultOrganization(
    principal: Principal,
    explicit: string | undefined,
    header: string | undefined,
  ): Promise<{ organizationId: string | undefined; implicit: boolean }> {
    if (explicit && header && explicit.toLowerCase() !== header.toLowerCase()) {
      throw AppException.validation([
        {
          field: 'X-Organization-Id',
          reason: 'X-Organization-Id and organizationId name different organizations',
        },
      ]);
    }
    const named = explicit ?? header;
    if (named) {
      return { organizationId: named, implicit: false };
    }
    const user = await this.users.findById(principal.userId);
    return { organizationId: user?.defaultOrganizationId ?? undefined, implicit: true };
  }

  /**
   * The document an event names, read once per transaction: a dispatched batch of events of one document asks for
   * it once, whatever the number of webhooks and creators.
   */
  private eventDocument(ref: {
    organizationId: string;
    workspaceId: string | null;
    docType: string;
    docId: string;
  }): Promise<DocumentRecord | null> {
    const key = `document:${JSON.stringify([ref.organizationId, ref.workspaceId, ref.docType, ref.docId])}`;
    return this.tx.memo(this, key, () => this.documents.findEventDocument(ref));
  }
}

/**
 * A document created after `asOf`, the event's recorded time, cannot be the one the event names: that one was deleted
 * and its id used again. Both times are the start of the transaction that wrote them (`now()`). The deleted
 * document's events were written by transactions that ended before its deletion did, and the new document can only
 * be inserted after that, so they are earlier; events the new document's creation records carry its `created_at`
 * exactly, and later writes of it start later. Left out on the safe side: an event of the new document recorded by a
 * transaction that began before the document's creation did (it reads the document once that commits) is taken as
 * the deleted one's and withheld. A delivery's own `created_at` would not do: the dispatch transaction that queued
 * it may have begun before the document was created. Millisecond precision on both sides only ever admits.
 */
function isLaterDocument(document: DocumentRecord, asOf: Date): boolean {
  return document.createdAt.getTime() > asOf.getTime();
}

function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
