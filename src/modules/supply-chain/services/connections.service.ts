import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import QRCode from 'qrcode';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type {
  Admission,
  BindingStatus,
  CatalogRecord,
  ConnectionRecord,
  ConnectionStatus,
  ShareLinkRecord,
} from '../domain/supply-chain.types.js';
import type {
  CatalogSummaryDto,
  ConnectionResponseDto,
  CreateConnectionDto,
  CreateShareLinkDto,
  SharedConnectionDto,
  ShareLinkInfoDto,
  ShareLinkResponseDto,
  UpdateConnectionDto,
} from '../dtos/connection.dto.js';
import { ConfigChecker, filterFieldIds, unknownFieldDetails } from '../dtos/sync-config.validation.js';
import { BindingRepository } from '../repositories/binding.repository.js';
import { CatalogRepository } from '../repositories/catalog.repository.js';
import { type ConnectionChanges, ConnectionRepository } from '../repositories/connection.repository.js';
import { isUuid } from '../repositories/sql.js';
import { toScField } from './field-helpers.js';
import { CATALOG_DOC_TYPE, notFound, SupplyChainAccessService } from './supply-chain-access.service.js';

export function hashShareCode(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

function iso(date: Date | null): string | null {
  return date ? new Date(date).toISOString() : null;
}

/** Allowed state changes of a connection (docs/supply-chain.md, "Connection states"). */
const TRANSITIONS: Record<
  'pause' | 'resume' | 'disable',
  { from: ConnectionStatus[]; to: ConnectionStatus }
> = {
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
  disable: { from: ['active', 'paused'], to: 'disabled' },
};

/** How a buyer organization is let in, or null when it is not (docs/supply-chain.md, "Bindings"). */
export interface Admission_ {
  status: BindingStatus;
  admittedVia: Admission;
  shareLinkId: string | null;
}

/**
 * Connections of a catalog (owned by the supplier), their states and share links, and what a buyer organization
 * may see of them. Supplier owners/admins manage; every supplier member reads; a buyer organization sees the
 * shared view of a connection that is public, lists it, or that it holds a live binding to — everything else is
 * NOT_FOUND, exactly like an id that does not exist.
 */
/**
 * Approval mode without an organization list: any organization may ask, and the supplier approves or rejects each
 * binding (spec 3: a buyer's binding "starts pending and waits for optional supplier approval"). This is the default
 * of a connection created without `accessControl`, so the spec's flow (connection, order book, binding by
 * `connectionId`, approval) works without a share code; nothing flows before the supplier approves. A list narrows
 * who may ask.
 */
function openToAsk(connection: ConnectionRecord): boolean {
  return connection.accessControl.mode === 'approval' && connection.accessControl.allowedOrganizations.length === 0;
}

@Injectable()
export class ConnectionsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: SupplyChainAccessService,
    private readonly connections: ConnectionRepository,
    private readonly catalogs: CatalogRepository,
    private readonly bindings: BindingRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(
    principal: Principal,
    organizationId: string,
    dto: CreateConnectionDto,
    pathCatalogId?: string,
  ): Promise<ConnectionResponseDto> {
    await this.access.member(principal, organizationId, 'admin');
    if (
      pathCatalogId &&
      dto.sourceCatalogId &&
      pathCatalogId.toLowerCase() !== dto.sourceCatalogId.toLowerCase()
    ) {
      throw AppException.validation([
        { field: 'sourceCatalogId', reason: 'sourceCatalogId and the catalog in the path differ' },
      ]);
    }
    const catalogId = pathCatalogId ?? dto.sourceCatalogId;
    if (!catalogId) {
      throw AppException.validation([{ field: 'sourceCatalogId', reason: 'sourceCatalogId is required' }]);
    }
    const { catalog, ctx } = await this.access.catalog(principal, organizationId, catalogId, 'read');
    if (!catalog.sharingEnabled) {
      throw new AppException(ErrorCode.INVALID_STATE, {
        details: [
          { field: 'sourceCatalogId', reason: 'sharing is disabled on this catalog (sharingEnabled false)' },
        ],
      });
    }
    const checker = new ConfigChecker();
    const accessControl = checker.accessControl(dto.accessControl, 'accessControl');
    const shareScope = checker.shareScope(dto.shareScope, 'shareScope');
    const defaultReceiverConfig = checker.defaultReceiverConfig(
      dto.defaultReceiverConfig,
      'defaultReceiverConfig',
    );
    const propagationEvents = checker.propagationEvents(dto.propagationEvents, 'propagationEvents');
    checker.done();
    this.checkScopeFields(shareScope, new Set(ctx.document.metadata.fields.map((field) => field.id)));
    const connection = await this.connections.insert({
      organizationId,
      catalogId: catalog.id,
      name: dto.name,
      description: dto.description ?? null,
      shareMode: dto.shareMode ?? 'multiple',
      accessControl: accessControl ?? { mode: 'approval', allowedOrganizations: [] },
      shareScope: shareScope ?? { type: 'all' },
      defaultReceiverConfig,
      propagationEvents: propagationEvents ?? {
        eventTypes: ['row_created', 'row_updated', 'row_deleted', 'field_value_changed'],
        batchMerge: false,
        batchWindowSeconds: 300,
      },
      createdBy: principal.userId,
    });
    return this.toDto(connection, 'owner');
  }

  async list(
    principal: Principal,
    organizationId: string,
    query: { page: number; pageSize: number; catalogId?: string; status?: string },
  ): Promise<Page<ConnectionResponseDto>> {
    await this.access.member(principal, organizationId);
    const { items, total } = await this.connections.list(
      organizationId,
      { catalogId: query.catalogId, status: query.status as ConnectionStatus | undefined },
      { limit: query.pageSize, offset: (query.page - 1) * query.pageSize },
    );
    const dtos: ConnectionResponseDto[] = [];
    for (const connection of items) {
      dtos.push(await this.toDto(connection, 'owner'));
    }
    return pageOf(dtos, total, query);
  }

  /** `GET /catalogs/{catalogId}/connections`: the catalog must be one of the organization's (else NOT_FOUND). */
  async listForCatalog(
    principal: Principal,
    organizationId: string,
    catalogId: string,
    query: { page: number; pageSize: number; status?: string },
  ): Promise<Page<ConnectionResponseDto>> {
    const { catalog } = await this.access.catalog(principal, organizationId, catalogId, 'read');
    return this.list(principal, organizationId, { ...query, catalogId: catalog.id });
  }

  /** The supplier's full record, or the shared view for a buyer organization allowed to see it; else NOT_FOUND. */
  async get(
    principal: Principal,
    organizationId: string,
    connectionId: string,
  ): Promise<ConnectionResponseDto> {
    await this.access.member(principal, organizationId);
    const connection = isUuid(connectionId) ? await this.connections.findById(connectionId) : null;
    if (!connection) {
      throw notFound('connection');
    }
    if (connection.organizationId === organizationId) {
      return this.toDto(connection, 'owner');
    }
    if (!(await this.visibleTo(organizationId, connection))) {
      throw notFound('connection');
    }
    return this.toDto(connection, 'shared');
  }

  async update(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    dto: UpdateConnectionDto,
  ): Promise<ConnectionResponseDto> {
    const connection = await this.owned(principal, organizationId, connectionId, 'admin');
    if (connection.status === 'disabled') {
      throw this.invalidState(connection, 'a disabled connection cannot be changed');
    }
    const checker = new ConfigChecker();
    const changes: ConnectionChanges = {};
    if (dto.name !== undefined) {
      changes.name = dto.name;
    }
    if (dto.description !== undefined) {
      changes.description = dto.description;
    }
    if (dto.shareMode !== undefined) {
      changes.shareMode = dto.shareMode;
    }
    if (dto.accessControl !== undefined) {
      changes.accessControl = checker.accessControl(dto.accessControl, 'accessControl');
    }
    if (dto.shareScope !== undefined) {
      changes.shareScope = checker.shareScope(dto.shareScope, 'shareScope');
    }
    if (dto.defaultReceiverConfig !== undefined) {
      changes.defaultReceiverConfig = checker.defaultReceiverConfig(
        dto.defaultReceiverConfig,
        'defaultReceiverConfig',
      );
    }
    if (dto.propagationEvents !== undefined) {
      changes.propagationEvents = checker.propagationEvents(dto.propagationEvents, 'propagationEvents');
    }
    checker.done();
    if (changes.shareScope) {
      const { ctx } = await this.access.catalog(principal, organizationId, connection.catalogId, 'read');
      this.checkScopeFields(
        changes.shareScope,
        new Set(ctx.document.metadata.fields.map((field) => field.id)),
      );
    }
    return this.toDto(await this.connections.update(connection.id, changes, principal.userId), 'owner');
  }

  async transition(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    action: 'pause' | 'resume' | 'disable',
  ): Promise<ConnectionResponseDto> {
    return this.tx.run(async () => {
      const connection = await this.owned(principal, organizationId, connectionId, 'admin', true);
      const rule = TRANSITIONS[action];
      if (!rule.from.includes(connection.status)) {
        throw this.invalidState(
          connection,
          `${action} needs a connection in state ${rule.from.join(' or ')}; it is ${connection.status}`,
        );
      }
      return this.toDto(await this.connections.setStatus(connection.id, rule.to, principal.userId), 'owner');
    });
  }

  async createShareLink(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    dto: CreateShareLinkDto,
  ): Promise<ShareLinkResponseDto> {
    const connection = await this.owned(principal, organizationId, connectionId, 'admin');
    if (connection.status === 'disabled') {
      throw this.invalidState(connection, 'a disabled connection cannot be shared');
    }
    const expiresAt = dto.expiresAt ? new Date(dto.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw AppException.validation([{ field: 'expiresAt', reason: 'expiresAt must be in the future' }]);
    }
    const code = randomBytes(18).toString('base64url');
    const link = await this.connections.insertLink({
      organizationId,
      connectionId: connection.id,
      codeHash: hashShareCode(code),
      expiresAt,
      maxUses: dto.maxUses ?? null,
      createdBy: principal.userId,
    });
    const shareUrl = `${this.config.publicBaseUrl.replace(/\/+$/, '')}/connect/share/${code}`;
    const qrCode = await QRCode.toDataURL(shareUrl, { errorCorrectionLevel: 'M', margin: 2, width: 256 });
    return {
      id: link.id,
      shareUrl,
      code,
      qrCode,
      expiresAt: iso(link.expiresAt),
      maxUses: link.maxUses,
      uses: link.uses,
    };
  }

  async listShareLinks(
    principal: Principal,
    organizationId: string,
    connectionId: string,
  ): Promise<ShareLinkInfoDto[]> {
    const connection = await this.owned(principal, organizationId, connectionId, 'admin');
    return (await this.connections.listLinks(organizationId, connection.id)).map((link) =>
      this.linkInfo(link),
    );
  }

  async revokeShareLink(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    linkId: string,
  ): Promise<ShareLinkInfoDto> {
    const connection = await this.owned(principal, organizationId, connectionId, 'admin');
    const link = isUuid(linkId)
      ? await this.connections.revokeLink(organizationId, connection.id, linkId)
      : null;
    if (!link) {
      throw notFound('share link');
    }
    return this.linkInfo(link);
  }

  /**
   * `GET /connect/share/{code}`: any signed-in user holding the code sees the connection's summary. A read: it
   * spends no use, it only checks the link — revoked, expired (or its connection disabled) → 410
   * SHARE_LINK_EXPIRED; `maxUses` organizations admitted and none of them the caller's → 410 SHARE_LINK_EXHAUSTED.
   */
  async resolveShareCode(principal: Principal, code: string): Promise<SharedConnectionDto> {
    const link = await this.findLink(code, false);
    if (!link) {
      throw notFound('share link');
    }
    const connection = this.checkLinkOpen(link, await this.connections.findById(link.connectionId));
    if (link.maxUses !== null && link.uses >= link.maxUses) {
      const organizationIds = await this.access.activeOrganizationIds(principal);
      if (!(await this.connections.admitsAny(link, organizationIds))) {
        throw exhausted(link);
      }
    }
    const dto = await this.toDto(connection, 'shared');
    if (!dto.catalog) {
      throw expired(link, 'the catalog was deleted');
    }
    return {
      connectionId: connection.id,
      name: connection.name,
      sourceOrganization: dto.sourceOrganization,
      catalog: dto.catalog,
      shareMode: connection.shareMode,
      accessMode: connection.accessControl.mode,
      status: connection.status,
      expiresAt: iso(link.expiresAt),
      remainingUses: link.maxUses === null ? null : Math.max(0, link.maxUses - link.uses),
    };
  }

  /**
   * The share link `code` names, as a buyer organization presents it for `connection` (docs/supply-chain.md,
   * "Share links"). No such code, or a code of another connection, is the NOT_FOUND of an unknown connection, so a
   * stranger's own codes tell it nothing about other tenants' ids; then a revoked or expired link (or a disabled
   * connection) → 410 SHARE_LINK_EXPIRED; then, when `maxUses` organizations were admitted through it and this one
   * is not among them, 410 SHARE_LINK_EXHAUSTED. `lock` (inside the admitting transaction) serializes admissions,
   * so concurrent ones never pass `maxUses`.
   */
  private async linkForBuyer(
    organizationId: string,
    connection: ConnectionRecord,
    code: string,
    lock: boolean,
  ): Promise<ShareLinkRecord> {
    const link = await this.findLink(code, lock);
    if (!link || link.connectionId !== connection.id) {
      throw notFound('connection');
    }
    this.checkLinkOpen(link, connection);
    // A statement after the lock: it sees the admissions committed while this one waited.
    const uses = lock ? await this.connections.admittedCount(link) : link.uses;
    if (
      link.maxUses !== null &&
      uses >= link.maxUses &&
      !(await this.connections.admitsAny(link, [organizationId]))
    ) {
      throw exhausted({ ...link, uses });
    }
    return link;
  }

  private async findLink(code: string, lock: boolean): Promise<ShareLinkRecord | null> {
    return typeof code === 'string' && code.length > 0 && code.length <= 128
      ? this.connections.findLinkByHash(hashShareCode(code), lock)
      : null;
  }

  /** The link's connection; a revoked or expired link, or a disabled connection → 410 SHARE_LINK_EXPIRED. */
  private checkLinkOpen(link: ShareLinkRecord, connection: ConnectionRecord | null): ConnectionRecord {
    if (link.revokedAt || !connection || connection.status === 'disabled') {
      throw expired(link, link.revokedAt ? 'the share link was revoked' : 'the connection is disabled');
    }
    if (link.expiresAt && new Date(link.expiresAt).getTime() <= Date.now()) {
      throw expired(link, `the share link expired at ${iso(link.expiresAt)}`);
    }
    return connection;
  }

  /**
   * Whether a buyer organization may see the connection: public, open to ask (approval mode without a list), listed,
   * or holding a live binding.
   */
  async visibleTo(organizationId: string, connection: ConnectionRecord): Promise<boolean> {
    if (connection.organizationId === organizationId) {
      return true;
    }
    if (
      connection.accessControl.mode === 'public' ||
      openToAsk(connection) ||
      connection.accessControl.allowedOrganizations.includes(organizationId)
    ) {
      return true;
    }
    return this.bindings.organizationHasLiveBinding(organizationId, connection.id);
  }

  /**
   * A connection a buyer organization may use (for order-book fields, previews, bindings); `shareCode` lets in a
   * buyer outside the whitelist (checked only, no use spent: a use is an admission, see `admit`). NOT_FOUND when it
   * may not see it.
   */
  async forBuyer(
    organizationId: string,
    connectionId: string,
    shareCode?: string,
  ): Promise<ConnectionRecord> {
    const connection = isUuid(connectionId) ? await this.connections.findById(connectionId) : null;
    if (!connection) {
      throw notFound('connection');
    }
    if (await this.visibleTo(organizationId, connection)) {
      return connection;
    }
    if (shareCode === undefined) {
      throw notFound('connection');
    }
    await this.linkForBuyer(organizationId, connection, shareCode, false);
    return connection;
  }

  /**
   * How a new binding of `organizationId` is admitted: public → active; whitelisted → active; approval mode for a
   * listed organization, or for anyone when the list is empty → pending; else a valid share code of this connection → pending, and the organization
   * counts as one use of the link (the supplier approves or rejects). Anyone else: NOT_FOUND. A disabled
   * connection takes no bindings (INVALID_STATE). Runs in the binding's transaction (the link stays locked).
   */
  async admit(organizationId: string, connection: ConnectionRecord, shareCode?: string): Promise<Admission_> {
    if (connection.status === 'disabled') {
      throw this.invalidState(connection, 'a disabled connection takes no new bindings');
    }
    const { mode, allowedOrganizations } = connection.accessControl;
    const listed =
      allowedOrganizations.includes(organizationId) || connection.organizationId === organizationId;
    if (mode === 'public') {
      return { status: 'active', admittedVia: 'public', shareLinkId: null };
    }
    if (mode === 'whitelist' && listed) {
      return { status: 'active', admittedVia: 'whitelist', shareLinkId: null };
    }
    if (mode === 'approval' && (listed || openToAsk(connection))) {
      return { status: 'pending', admittedVia: 'approval', shareLinkId: null };
    }
    if (shareCode === undefined) {
      throw notFound('connection');
    }
    const link = await this.linkForBuyer(organizationId, connection, shareCode, true);
    await this.connections.touchLink(link.id);
    return { status: 'pending', admittedVia: 'share_link', shareLinkId: link.id };
  }

  /** A connection of the supplier organization, with the caller holding at least `minimum` there. */
  async owned(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    minimum: 'guest' | 'admin',
    lock = false,
  ): Promise<ConnectionRecord> {
    await this.access.member(principal, organizationId, minimum);
    const connection = isUuid(connectionId)
      ? await this.connections.find(organizationId, connectionId, lock)
      : null;
    if (!connection) {
      throw notFound('connection');
    }
    return connection;
  }

  async catalogSummary(catalog: CatalogRecord, withFields: boolean): Promise<CatalogSummaryDto> {
    const ctx = await this.access.openAsSystem(
      catalog.createdBy,
      catalog.organizationId,
      CATALOG_DOC_TYPE,
      catalog.id,
    );
    const fields = ctx.document.metadata.fields;
    return {
      id: catalog.id,
      name: catalog.name,
      catalogType: catalog.catalogType,
      fieldCount: fields.length,
      ...(withFields ? { fields: fields.map((field) => toScField(field, catalog.fieldDescriptions)) } : {}),
    };
  }

  async toDto(connection: ConnectionRecord, view: 'owner' | 'shared'): Promise<ConnectionResponseDto> {
    // Null once the catalog is deleted (its connections are disabled with it).
    const catalog = await this.catalogs.findCatalogById(connection.catalogId);
    const names = await this.catalogs.organizationNames([connection.organizationId]);
    const base: ConnectionResponseDto = {
      id: connection.id,
      view,
      name: connection.name,
      description: connection.description,
      sourceCatalogId: connection.catalogId,
      sourceOrganization: { id: connection.organizationId, name: names.get(connection.organizationId) ?? '' },
      catalog: catalog ? await this.catalogSummary(catalog, true) : null,
      shareMode: connection.shareMode,
      accessControl: accessControlAnswer(connection.accessControl, view),
      defaultReceiverConfig: connection.defaultReceiverConfig,
      propagationEvents: connection.propagationEvents,
      status: connection.status,
      createdAt: new Date(connection.createdAt).toISOString(),
      updatedAt: new Date(connection.updatedAt).toISOString(),
    };
    if (view === 'owner') {
      base.shareScope =
        connection.shareScope.type === 'all'
          ? { type: 'all' }
          : { mode: 'filter', type: 'filter', filterGroup: connection.shareScope.filterGroup };
    }
    return base;
  }

  private checkScopeFields(scope: ConnectionRecord['shareScope'] | undefined, known: Set<string>): void {
    if (scope?.type !== 'filter') {
      return;
    }
    const details = unknownFieldDetails(
      filterFieldIds(scope.filterGroup).map((id) => ['shareScope.filterGroup', id]),
      known,
      'the catalog',
    );
    if (details.length > 0) {
      throw AppException.validation(details);
    }
  }

  private invalidState(connection: ConnectionRecord, reason: string): AppException {
    return new AppException(ErrorCode.INVALID_STATE, {
      details: [{ field: 'status', reason }],
      payload: { connectionId: connection.id, status: connection.status },
    });
  }

  private linkInfo(link: ShareLinkRecord): ShareLinkInfoDto {
    return {
      id: link.id,
      expiresAt: iso(link.expiresAt),
      maxUses: link.maxUses,
      uses: link.uses,
      revokedAt: iso(link.revokedAt),
      createdAt: new Date(link.createdAt).toISOString(),
    };
  }
}

/**
 * A connection's access control as answered: the string `public` for a public connection without an organization
 * list (spec 2.14 writes it so); otherwise the object, whose `allowedOrganizations` only the owner sees.
 */
function accessControlAnswer(access: { mode: string; allowedOrganizations: string[] }, view: 'owner' | 'shared'): ConnectionResponseDto['accessControl'] {
  if (access.mode === 'public' && access.allowedOrganizations.length === 0) {
    return 'public';
  }
  return view === 'owner' ? access : { mode: access.mode };
}

function linkPayload(link: ShareLinkRecord): {
  expiresAt: string | null;
  maxUses: number | null;
  uses: number;
} {
  return { expiresAt: iso(link.expiresAt), maxUses: link.maxUses, uses: link.uses };
}

function expired(link: ShareLinkRecord, reason: string): AppException {
  return new AppException(ErrorCode.SHARE_LINK_EXPIRED, {
    details: [{ reason }],
    payload: linkPayload(link),
  });
}

function exhausted(link: ShareLinkRecord): AppException {
  return new AppException(ErrorCode.SHARE_LINK_EXHAUSTED, {
    details: [
      {
        reason: `${link.uses} of ${link.maxUses ?? 0} organizations were admitted through the share link; it admits no other`,
      },
    ],
    payload: linkPayload(link),
  });
}
