import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type {
  CatalogRecord,
  ConnectionRecord,
  ConnectionStatus,
  DefaultReceiverConfig,
} from '../domain/supply-chain.types.js';
import type {
  CatalogSummaryDto,
  ConnectionResponseDto,
  CreateConnectionDto,
  UpdateConnectionDto,
} from '../dtos/connection.dto.js';
import { ConfigChecker } from '../dtos/sync-config.validation.js';
import {
  filterFieldRefs,
  filterOperandDetails,
  formulaSourceFieldIds,
  unknownFieldDetails,
} from '../dtos/sync-config-fields.validation.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { BindingRepository } from '../repositories/binding.repository.js';
import { CatalogRepository } from '../repositories/catalog.repository.js';
import { type ConnectionChanges, ConnectionRepository } from '../repositories/connection.repository.js';
import { isUuid } from '../repositories/sql.js';
import { ConnectionAdmissionService, connectionInvalidState } from './connection-admission.service.js';
import { ShareScopeChanges } from './share-scope-changes.js';
import { BindingActivations } from './binding-activations.js';
import { toScField } from './field-helpers.js';
import { CATALOG_DOC_TYPE, notFound, SupplyChainAccessService } from './supply-chain-access.service.js';
import { OrganizationDirectoryService } from '../../tenancy/services/organization-directory.service.js';
import { sameUuid } from '../../../common/uuids.js';

/** Allowed state changes of a connection (docs/supply-chain.md, "Connection states"). */
const TRANSITIONS: Record<
  'pause' | 'resume' | 'disable',
  { from: ConnectionStatus[]; to: ConnectionStatus }
> = {
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
  disable: { from: ['active', 'paused'], to: 'disabled' },
};

/**
 * Connections of a catalog (owned by the supplier) and their states. Supplier owners/admins manage; every supplier
 * member reads; a buyer organization sees the shared view of a connection it may see (ConnectionAdmissionService) —
 * everything else is NOT_FOUND, exactly like an id that does not exist.
 */
@Injectable()
export class ConnectionsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: SupplyChainAccessService,
    private readonly connections: ConnectionRepository,
    private readonly catalogs: CatalogRepository,
    private readonly admission: ConnectionAdmissionService,
    private readonly bindings: BindingRepository,
    private readonly shareScopeChanges: ShareScopeChanges,
    private readonly organizations: OrganizationDirectoryService,
    private readonly activations: BindingActivations,
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
    this.checkCatalogFields(shareScope, defaultReceiverConfig, ctx.document.metadata.fields);
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
    if (!(await this.admission.visibleTo(organizationId, connection))) {
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
    requireOwnIdentity(connection, dto);
    if (connection.status === 'disabled') {
      throw connectionInvalidState(connection, 'a disabled connection cannot be changed');
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
    if (changes.shareScope || changes.defaultReceiverConfig) {
      const { ctx } = await this.access.catalog(principal, organizationId, connection.catalogId, 'read');
      this.checkCatalogFields(changes.shareScope, changes.defaultReceiverConfig, ctx.document.metadata.fields);
    }
    return this.tx.run(async () => {
      // The scope as stored now (locked: a concurrent change is either seen here or waits for this one).
      const before = changes.shareScope
        ? await this.connections.find(organizationId, connection.id, true)
        : connection;
      const updated = await this.connections.update(connection.id, changes, principal.userId);
      if (changes.accessControl) {
        await this.endBindingsNoLongerAdmitted(updated, principal.userId);
      }
      // Rows already shared follow a new scope: every active binding is reconciled, queued in this transaction
      // (both sides read back from jsonb, so equal scopes compare equal).
      if (changes.shareScope && JSON.stringify(before?.shareScope) !== JSON.stringify(updated.shareScope)) {
        await this.shareScopeChanges.changed(updated);
      }
      return this.toDto(updated, 'owner');
    });
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
        throw connectionInvalidState(
          connection,
          `${action} needs a connection in state ${rule.from.join(' or ')}; it is ${connection.status}`,
        );
      }
      const updated = await this.connections.setStatus(connection.id, rule.to, principal.userId);
      if (action === 'resume') {
        await this.activations.connectionResumed(updated);
      }
      return this.toDto(updated, 'owner');
    });
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
    const names = await this.organizations.names([connection.organizationId]);
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

  /**
   * Catalog field ids named by the share scope and by the suggested field mapping's sources must be fields of the
   * catalog (a suggestion's targets are the buyer's: they are matched when a binding takes it), and the share
   * scope's operands must fit the fields they test (`filterOperandDetails`).
   */
  private checkCatalogFields(
    scope: ConnectionRecord['shareScope'] | undefined,
    receiverConfig: DefaultReceiverConfig | null | undefined,
    fields: readonly FieldDefinition[],
  ): void {
    const known = new Set(fields.map((field) => field.id));
    const refs: Array<[string, string]> =
      scope?.type === 'filter' ? filterFieldRefs(scope.filterGroup, 'shareScope.filterGroup') : [];
    const rules = receiverConfig?.suggestedFieldMapping?.rules ?? [];
    rules.forEach((rule, index) => {
      const at = `defaultReceiverConfig.suggestedFieldMapping.rules[${index}]`;
      for (const id of rule.sourceFieldIds ?? [rule.sourceFieldId]) {
        refs.push([`${at}.sourceFieldId${rule.sourceFieldIds ? 's' : ''}`, id]);
      }
      for (const id of formulaSourceFieldIds(rule)) {
        refs.push([`${at}.formula`, id]);
      }
    });
    const details = [
      ...unknownFieldDetails(refs, known, 'the catalog'),
      ...(scope?.type === 'filter' ? filterOperandDetails(scope.filterGroup, 'shareScope.filterGroup', fields) : []),
    ];
    if (details.length > 0) {
      throw AppException.validation(details);
    }
  }

  /**
   * A narrowed access control cuts off the organizations it no longer admits: their live bindings admitted by the
   * access control (`public`, `whitelist`, `approval`) end as `rejected` with a review note — the only ending state
   * of spec 3. Bindings admitted by a share link stay (the supplier rejects one alone with POST …/reject).
   */
  private async endBindingsNoLongerAdmitted(connection: ConnectionRecord, userId: string): Promise<void> {
    const { mode, allowedOrganizations } = connection.accessControl;
    const openToAll = mode === 'public' || (mode === 'approval' && allowedOrganizations.length === 0);
    if (openToAll) {
      return;
    }
    await this.bindings.endNotAdmitted(
      connection.id,
      [...allowedOrganizations, connection.organizationId],
      userId,
      'access revoked: the connection no longer admits this organization',
    );
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

/** A PATCH body that is the connection as read: `id` and `sourceCatalogId`, when sent, must be this connection's. */
function requireOwnIdentity(connection: ConnectionRecord, dto: UpdateConnectionDto): void {
  const problems: Array<{ field: string; reason: string }> = [];
  if (dto.id !== undefined && !sameUuid(dto.id, connection.id)) {
    problems.push({ field: 'id', reason: 'must be the id in the path' });
  }
  if (dto.sourceCatalogId !== undefined && !sameUuid(dto.sourceCatalogId, connection.catalogId)) {
    problems.push({ field: 'sourceCatalogId', reason: 'a connection never moves to another catalog; create a new connection instead' });
  }
  if (problems.length > 0) {
    throw AppException.validation(problems);
  }
}
