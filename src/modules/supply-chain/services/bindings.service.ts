import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { UsersService } from '../../identity/services/users.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import type {
  BindingRecord,
  BindingStatus,
  ConflictResolution,
  ConnectionRecord,
  FieldMapping,
  FieldMappingRule,
  OrderBookRecord,
  ReceiverFilter,
} from '../domain/supply-chain.types.js';
import type { SupplierBindingDto } from '../dtos/connection.dto.js';
import type { BindingResponseDto, CreateBindingDto } from '../dtos/orderbook.dto.js';
import {
  ConfigChecker,
  filterFieldIds,
  formulaSourceFieldIds,
  unknownFieldDetails,
} from '../dtos/sync-config.validation.js';
import { BindingRepository } from '../repositories/binding.repository.js';
import { CatalogRepository } from '../repositories/catalog.repository.js';
import { isUuid } from '../repositories/sql.js';
import { BindingActivations } from './binding-activations.js';
import { ConnectionAdmissionService, connectionInvalidState } from './connection-admission.service.js';
import { ConnectionsService } from './connections.service.js';
import { OrderBooksService } from './orderbooks.service.js';
import { notFound, SupplyChainAccessService } from './supply-chain-access.service.js';

function iso(date: Date | null): string | null {
  return date ? new Date(date).toISOString() : null;
}

export function bindingDto(binding: BindingRecord): BindingResponseDto {
  return {
    id: binding.id,
    connectionId: binding.connectionId,
    targetOrderBookId: binding.orderBookId,
    sourceCatalogId: binding.catalogId,
    supplierOrganizationId: binding.supplierOrganizationId,
    status: binding.status,
    admittedVia: binding.admittedVia,
    fieldMapping: binding.fieldMapping,
    receiverFilter: binding.receiverFilter,
    conflictResolution: binding.conflictResolution,
    reviewNote: binding.reviewNote,
    reviewedAt: iso(binding.reviewedAt),
    activatedAt: iso(binding.activatedAt),
    createdBy: binding.createdBy,
    createdAt: new Date(binding.createdAt).toISOString(),
    updatedAt: new Date(binding.updatedAt).toISOString(),
  };
}

/** A second live binding of one order book to one connection (docs/supply-chain.md, "Bindings"). */
function alreadyBound(live: BindingRecord): AppException {
  return new AppException(ErrorCode.ALREADY_EXISTS, {
    details: [
      {
        field: 'connectionId',
        reason: `the order book already has a ${live.status} binding to this connection`,
      },
    ],
    payload: { bindingId: live.id, status: live.status },
  });
}

/** Field-id checks of a binding's configuration against the catalog (source) and the order book (target). */
export function bindingFieldProblems(
  config: {
    fieldMapping: FieldMapping;
    receiverFilter: ReceiverFilter;
    conflictResolution: ConflictResolution;
  },
  source: Set<string>,
  target: Set<string>,
): ErrorDetail[] {
  const sourceRefs: Array<[string, string]> = [];
  const targetRefs: Array<[string, string]> = [];
  config.fieldMapping.rules.forEach((rule, index) => {
    for (const id of rule.sourceFieldIds ?? [rule.sourceFieldId]) {
      sourceRefs.push([`fieldMapping.rules[${index}].sourceFieldId`, id]);
    }
    for (const id of formulaSourceFieldIds(rule)) {
      sourceRefs.push([`fieldMapping.rules[${index}].formula`, id]);
    }
    for (const id of rule.targetFieldIds ?? [rule.targetFieldId]) {
      targetRefs.push([`fieldMapping.rules[${index}].targetFieldId`, id]);
    }
  });
  const filter = config.receiverFilter;
  for (const id of filterFieldIds(filter.filterGroup)) {
    sourceRefs.push(['receiverFilter.filterGroup', id]);
  }
  for (const key of ['autoAcceptIf', 'requireApprovalIf', 'autoRejectIf'] as const) {
    for (const id of filterFieldIds(filter.manualAcceptRules?.[key])) {
      sourceRefs.push([`receiverFilter.manualAcceptRules.${key}`, id]);
    }
  }
  for (const id of filter.deduplicationFieldIds ?? []) {
    targetRefs.push(['receiverFilter.deduplicationFieldIds', id]);
  }
  for (const id of Object.keys(config.conflictResolution.fieldStrategies)) {
    targetRefs.push([`conflictResolution.fieldStrategies.${id}`, id]);
  }
  return [
    ...unknownFieldDetails(sourceRefs, source, 'the catalog'),
    ...unknownFieldDetails(targetRefs, target, 'the order book'),
  ];
}

function directRule(sourceFieldId: string, targetFieldId: string): FieldMappingRule {
  return { sourceFieldId, targetFieldId, enabled: true, transformType: 'direct', propagationMode: 'oneway' };
}

/**
 * The default direct rules of a binding, the first kind that gives any: to the order-book fields generated from this
 * connection; else to those generated from another connection of the same catalog (an order book made from C1 bound
 * to C2); else between fields with the same id in the catalog and the order book. Only fields both still have.
 */
function directRules(
  connection: ConnectionRecord,
  orderBook: OrderBookRecord,
  source: Set<string>,
  target: Set<string>,
): FieldMappingRule[] {
  const fromGenerated = (keep: (field: OrderBookRecord['generatedFields'][number]) => boolean) =>
    orderBook.generatedFields
      .filter((field) => keep(field) && source.has(field.sourceFieldId) && target.has(field.id))
      .map((field) => directRule(field.sourceFieldId, field.id));
  const ofConnection = fromGenerated((field) => field.connectionId === connection.id);
  if (ofConnection.length > 0) {
    return ofConnection;
  }
  const ofCatalog = fromGenerated((field) => field.sourceCatalogId === connection.catalogId);
  if (ofCatalog.length > 0) {
    return ofCatalog;
  }
  return [...source].filter((id) => target.has(id)).map((id) => directRule(id, id));
}

/**
 * Whether a binding's mapping writes any order-book field: an enabled rule, or `unmappedFields: create` with a catalog
 * field that finds its order-book field (generated from the catalog, same id or same name — as propagation does).
 */
function mapsAnything(
  mapping: FieldMapping,
  sourceFields: FieldDefinition[],
  targetFields: FieldDefinition[],
  orderBook: OrderBookRecord,
  catalogId: string,
): boolean {
  if (mapping.rules.some((rule) => rule.enabled !== false)) {
    return true;
  }
  if (mapping.unmappedFields !== 'create') {
    return false;
  }
  const ids = new Set(targetFields.map((field) => field.id));
  const names = new Set(targetFields.map((field) => field.name.trim().toLowerCase()));
  return sourceFields.some(
    (field) =>
      ids.has(field.id) ||
      names.has(field.name.trim().toLowerCase()) ||
      orderBook.generatedFields.some(
        (generated) =>
          generated.sourceCatalogId === catalogId && generated.sourceFieldId === field.id && ids.has(generated.id),
      ),
  );
}

/**
 * Bindings of an order book to a connection (docs/supply-chain.md, "Bindings"): created by the buyer (owner, admin
 * or member), admitted by the connection's access control, approved or rejected by the supplier's owners/admins.
 * The supplier sees only the binding's state and the buyer organization's name, never the order book.
 */
@Injectable()
export class BindingsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: SupplyChainAccessService,
    private readonly bindings: BindingRepository,
    private readonly catalogs: CatalogRepository,
    private readonly connections: ConnectionsService,
    private readonly admission: ConnectionAdmissionService,
    private readonly orderBooks: OrderBooksService,
    private readonly users: UsersService,
    private readonly notifier: NotifierService,
    private readonly activations: BindingActivations,
  ) {}

  async create(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    dto: CreateBindingDto,
  ): Promise<BindingResponseDto> {
    if (dto.targetOrderBookId && dto.targetOrderBookId.toLowerCase() !== orderBookId.toLowerCase()) {
      throw AppException.validation([
        { field: 'targetOrderBookId', reason: 'targetOrderBookId and the order book in the path differ' },
      ]);
    }
    await this.access.member(principal, organizationId, 'member');
    const { orderBook, ctx } = await this.access.orderBook(principal, organizationId, orderBookId, 'write');
    const connection = await this.admission.forBuyer(organizationId, dto.connectionId, dto.shareCode);
    if (connection.status === 'disabled') {
      // Before the catalog's fields are read: a deleted catalog disables its connections, and the binding answers
      // like the field-mapping preview, not NOT_FOUND (docs/supply-chain.md, "Bindings").
      throw connectionInvalidState(connection, 'a disabled connection takes no new bindings');
    }
    const sourceFields = await this.orderBooks.sourceFields(connection);
    const source = new Set(sourceFields.map((field) => field.id));
    const target = new Set(ctx.document.metadata.fields.map((field) => field.id));
    const checker = new ConfigChecker();
    let fieldMapping =
      dto.fieldMapping !== undefined
        ? checker.fieldMapping(dto.fieldMapping, 'fieldMapping')
        : this.defaultMapping(connection, orderBook, source, target);
    const receiverFilter = checker.receiverFilter(
      dto.receiverFilter ?? this.defaultReceiverFilter(connection),
      'receiverFilter',
    );
    const conflictResolution = checker.conflictResolution(dto.conflictResolution, 'conflictResolution');
    checker.done();
    if (
      dto.fieldMapping === undefined &&
      !mapsAnything(
        fieldMapping as FieldMapping,
        sourceFields,
        ctx.document.metadata.fields,
        orderBook,
        connection.catalogId,
      )
    ) {
      // A default mapping that maps nothing would create one blank order-book row per catalog row: the direct
      // rules take its place, or, when there are none either, the binding is refused (docs/supply-chain.md,
      // "Bindings"). A fieldMapping the buyer sent is kept as sent.
      const rules = directRules(connection, orderBook, source, target);
      if (rules.length === 0) {
        throw AppException.validation([
          { field: 'fieldMapping', reason: 'no field of the catalog maps to this order book' },
        ]);
      }
      fieldMapping = { rules, unmappedFields: 'ignore' };
    }
    const config = {
      fieldMapping: fieldMapping as FieldMapping,
      receiverFilter: receiverFilter as ReceiverFilter,
      conflictResolution: conflictResolution as ConflictResolution,
    };
    const problems = bindingFieldProblems(config, source, target);
    if (problems.length > 0) {
      throw AppException.validation(problems);
    }
    return this.tx.run(async () => {
      // Admitted against the connection as locked in this transaction, not as read above (a concurrent narrowing).
      const admission = await this.admission.admit(organizationId, connection.id, dto.shareCode);
      const live = await this.bindings.findLive(orderBook.id, connection.id);
      if (live) {
        throw alreadyBound(live);
      }
      const binding = await this.bindings.insertIfNoLive({
        organizationId,
        orderBookId: orderBook.id,
        connectionId: connection.id,
        supplierOrganizationId: connection.organizationId,
        catalogId: connection.catalogId,
        ...config,
        status: admission.status,
        admittedVia: admission.admittedVia,
        shareLinkId: admission.shareLinkId,
        createdBy: principal.userId,
      });
      if (!binding) {
        // Created concurrently since the check above: the same answer as a sequential duplicate.
        const winner = await this.bindings.findLive(orderBook.id, connection.id);
        throw winner ? alreadyBound(winner) : new AppException(ErrorCode.CONFLICT, { details: [{ reason: 'concurrent change, retry' }] });
      }
      if (binding.status === 'active') {
        await this.activations.activated(binding);
      }
      if (binding.status === 'pending') {
        await this.tell(
          connection.createdBy,
          'binding_pending_approval',
          `A binding to ${connection.name} waits for your approval`,
          {
            bindingId: binding.id,
            connectionId: connection.id,
            buyerOrganizationId: organizationId,
            admittedVia: binding.admittedVia,
          },
        );
      }
      return bindingDto(binding);
    });
  }

  async list(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    query: { page: number; pageSize: number; status?: string },
  ): Promise<Page<BindingResponseDto>> {
    const { orderBook } = await this.access.orderBook(principal, organizationId, orderBookId, 'read');
    const { items, total } = await this.bindings.listForOrderBook(
      organizationId,
      orderBook.id,
      query.status as BindingStatus | undefined,
      {
        limit: query.pageSize,
        offset: (query.page - 1) * query.pageSize,
      },
    );
    return pageOf(items.map(bindingDto), total, query);
  }

  async get(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    bindingId: string,
  ): Promise<BindingResponseDto> {
    const { orderBook } = await this.access.orderBook(principal, organizationId, orderBookId, 'read');
    const binding = isUuid(bindingId)
      ? await this.bindings.findForBuyer(organizationId, orderBook.id, bindingId)
      : null;
    if (!binding) {
      throw notFound('binding');
    }
    return bindingDto(binding);
  }

  /** The supplier's list of the bindings of one of its connections (state only). */
  async listForSupplier(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    query: { page: number; pageSize: number; status?: string },
  ): Promise<Page<SupplierBindingDto>> {
    const connection = await this.connections.owned(principal, organizationId, connectionId, 'guest');
    const { items, total } = await this.bindings.listForConnection(
      organizationId,
      connection.id,
      query.status as BindingStatus | undefined,
      {
        limit: query.pageSize,
        offset: (query.page - 1) * query.pageSize,
      },
    );
    const names = await this.catalogs.organizationNames([
      ...new Set(items.map((binding) => binding.organizationId)),
    ]);
    return pageOf(
      items.map((binding) => this.supplierDto(binding, names)),
      total,
      query,
    );
  }

  /** pending → active (approve) or rejected (reject), by the supplier's owners/admins; other states INVALID_STATE. */
  async decide(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    bindingId: string,
    decision: 'approve' | 'reject',
    note?: string,
  ): Promise<SupplierBindingDto> {
    return this.tx.run(async () => {
      const connection = await this.connections.owned(principal, organizationId, connectionId, 'admin');
      const binding = isUuid(bindingId)
        ? await this.bindings.findForSupplier(organizationId, connection.id, bindingId, true)
        : null;
      if (!binding) {
        throw notFound('binding');
      }
      // Reject also ends an active binding: the supplier's way to cut off one buyer (revocation).
      if (binding.status !== 'pending' && !(decision === 'reject' && binding.status === 'active')) {
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [
            {
              field: 'status',
              reason:
                decision === 'approve'
                  ? `only pending bindings can be approved; this one is ${binding.status}`
                  : `only pending or active bindings can be rejected; this one is ${binding.status}`,
            },
          ],
          payload: { bindingId: binding.id, status: binding.status },
        });
      }
      if (decision === 'approve' && connection.status === 'disabled') {
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [{ field: 'status', reason: 'the connection is disabled' }],
          payload: { connectionId: connection.id, status: connection.status },
        });
      }
      const decided = await this.bindings.decide(
        binding.id,
        decision === 'approve' ? 'active' : 'rejected',
        principal.userId,
        note ?? null,
      );
      if (decided.status === 'active') {
        await this.activations.activated(decided);
      }
      await this.tell(
        binding.createdBy,
        decision === 'approve' ? 'binding_approved' : 'binding_rejected',
        `Your binding to ${connection.name} was ${decision === 'approve' ? 'approved' : 'rejected'}`,
        {
          bindingId: binding.id,
          connectionId: connection.id,
          orderBookId: binding.orderBookId,
          status: decided.status,
          reviewNote: decided.reviewNote,
        },
      );
      const names = await this.catalogs.organizationNames([decided.organizationId]);
      return this.supplierDto(decided, names);
    });
  }

  /** An e-mail to one user, recorded in the current transaction (docs/supply-chain.md, "Bindings"). */
  private async tell(
    userId: string,
    kind: string,
    subject: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    const user = (await this.users.summaries([userId])).get(userId);
    if (user?.email) {
      await this.notifier.send({
        channel: 'email',
        to: user.email,
        userId,
        kind,
        subject,
        body: `${subject}.`,
        data,
      });
    }
  }

  private supplierDto(binding: BindingRecord, names: Map<string, string>): SupplierBindingDto {
    return {
      id: binding.id,
      connectionId: binding.connectionId,
      buyerOrganization: { id: binding.organizationId, name: names.get(binding.organizationId) ?? '' },
      status: binding.status,
      admittedVia: binding.admittedVia,
      reviewNote: binding.reviewNote,
      reviewedAt: iso(binding.reviewedAt),
      createdAt: new Date(binding.createdAt).toISOString(),
    };
  }

  /**
   * Without a fieldMapping: the connection's suggestion, keeping only the rules that fit — every source a field of
   * the catalog and every target a field of this order book (the supplier cannot know the buyer's fields, so a rule
   * that does not fit is skipped, not reported as the buyer's error); when no rule of it fits (or there is none),
   * the direct rules (`directRules`).
   */
  private defaultMapping(
    connection: ConnectionRecord,
    orderBook: OrderBookRecord,
    source: Set<string>,
    target: Set<string>,
  ): FieldMapping {
    const suggested = connection.defaultReceiverConfig?.suggestedFieldMapping;
    const fitting = (suggested?.rules ?? []).filter(
      (rule) =>
        (rule.sourceFieldIds ?? [rule.sourceFieldId]).every((id) => source.has(id)) &&
        formulaSourceFieldIds(rule).every((id) => source.has(id)) &&
        (rule.targetFieldIds ?? [rule.targetFieldId]).every((id) => target.has(id)),
    );
    if (suggested && fitting.length > 0) {
      return { ...suggested, rules: fitting };
    }
    return { rules: directRules(connection, orderBook, source, target), unmappedFields: 'ignore' };
  }

  private defaultReceiverFilter(connection: ConnectionRecord): Record<string, unknown> {
    const mode = connection.defaultReceiverConfig?.suggestedAcceptMode;
    return mode ? { acceptMode: mode } : {};
  }
}
