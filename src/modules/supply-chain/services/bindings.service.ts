import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { UsersService } from '../../identity/services/users.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import { bindingFieldProblems, defaultMapping, defaultReceiverFilter, directRules, mapsAnything } from '../domain/binding-config.js';
import type { BindingRecord, BindingStatus, ConflictResolution, FieldMapping, ReceiverFilter } from '../domain/supply-chain.types.js';
import type { SupplierBindingDto } from '../dtos/connection.dto.js';
import type { BindingResponseDto, CreateBindingDto } from '../dtos/orderbook.dto.js';
import { ConfigChecker } from '../dtos/sync-config.validation.js';
import { BindingRepository } from '../repositories/binding.repository.js';
import { CatalogRepository } from '../repositories/catalog.repository.js';
import { isUuid } from '../repositories/sql.js';
import { ActingMembers } from './acting-members.service.js';
import { BindingActivations } from './binding-activations.js';
import { ConnectionAdmissionService, connectionInvalidState, isoOrNull } from './connection-admission.service.js';
import { ConnectionsService } from './connections.service.js';
import { OrderBooksService } from './orderbooks.service.js';
import { notFound, SupplyChainAccessService } from './supply-chain-access.service.js';
import { OrganizationDirectoryService } from '../../tenancy/services/organization-directory.service.js';


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
    reviewedAt: isoOrNull(binding.reviewedAt),
    activatedAt: isoOrNull(binding.activatedAt),
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
        reason: `the order book already has ${live.status === 'active' ? 'an' : 'a'} ${live.status} binding to this connection`,
      },
    ],
    payload: { bindingId: live.id, status: live.status },
  });
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
    private readonly members: ActingMembers,
    private readonly organizations: OrganizationDirectoryService,
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
        : defaultMapping(connection, orderBook, source, target);
    const receiverFilter = checker.receiverFilter(
      dto.receiverFilter ?? defaultReceiverFilter(connection),
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
    const problems = bindingFieldProblems(config, source, target, sourceFields);
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
          connection.organizationId,
          connection.createdBy,
          'admin',
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
    const names = await this.organizations.names([
      ...new Set(items.map((binding) => binding.organizationId)),
    ]);
    return pageOf(
      items.map((binding) => this.supplierDto(binding, names)),
      total,
      query,
    );
  }

  /**
   * pending → active (approve) or rejected (reject; also active → rejected), by the supplier's owners/admins; other
   * states INVALID_STATE. A reject records the supplier's refusal of the buyer organization on the connection, an
   * approval lifts it.
   */
  async decide(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    bindingId: string,
    decision: 'approve' | 'reject',
    note?: string,
  ): Promise<SupplierBindingDto> {
    return this.tx.run(async () => {
      // Locked: a binding of the same organization admitted concurrently (its admission reads the connection FOR
      // SHARE) is either committed before this decision or sees the refusal it records.
      const connection = await this.connections.owned(principal, organizationId, connectionId, 'admin', true);
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
      // A reject stands for the buyer organization on this connection until the supplier approves one of its
      // bindings: a public or whitelist connection no longer admits it at once (docs/supply-chain.md, "Bindings").
      if (decided.status === 'active') {
        await this.bindings.lift(connection.id, decided.organizationId);
        await this.activations.activated(decided);
      } else {
        await this.bindings.refuse(connection.id, decided.organizationId, decided.id, principal.userId);
      }
      await this.tell(
        binding.organizationId,
        binding.createdBy,
        'member',
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
      const names = await this.organizations.names([decided.organizationId]);
      return this.supplierDto(decided, names);
    });
  }

  /**
   * An e-mail to `userId` while an active member of the organization holding `minimum` (the role to act on it), else
   * to its active owners and admins — never to someone who left (ActingMembers; docs/supply-chain.md, "Who the
   * propagation acts as, who is told"). Recorded in the current transaction.
   */
  private async tell(
    organizationId: string,
    userId: string,
    minimum: 'admin' | 'member',
    kind: string,
    subject: string,
    data: Record<string, unknown>,
  ): Promise<void> {
    const recipients = await this.members.recipients(organizationId, userId, minimum);
    const users = await this.users.summaries(recipients);
    for (const recipient of recipients) {
      const email = users.get(recipient)?.email;
      if (email) {
        await this.notifier.send({
          channel: 'email',
          to: email,
          userId: recipient,
          kind,
          subject,
          body: `${subject}.`,
          data,
        });
      }
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
      reviewedAt: isoOrNull(binding.reviewedAt),
      createdAt: new Date(binding.createdAt).toISOString(),
    };
  }


}
