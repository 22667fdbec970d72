import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { ChangeEngineService } from '../../documents/services/change-engine.service.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import {
  RequestHooks,
  type RequestMerged,
  type RequestTouched,
} from '../../documents/services/request-hooks.js';
import { RequestsService } from '../../documents/services/requests.service.js';
import { OutboxService } from '../../events/outbox.service.js';
import {
  type BindingRecord,
  type OrderBookRecord,
  type SyncRequestRecord,
  type SyncRequestStatus,
} from '../domain/supply-chain.types.js';
import type { SyncRequestResponseDto } from '../dtos/orderbook.dto.js';
import { CatalogRepository } from '../repositories/catalog.repository.js';
import { SYNC_REQUEST_ID_RULE, syncRequestKey } from '../domain/sync-request-id.js';
import { isUuid } from '../repositories/sql.js';
import { SyncRepository } from '../repositories/sync.repository.js';
import { DocumentWritesService, type ResolvedRowOp, valueEntries } from './document-writes.service.js';
import { notFound, ORDERBOOK_DOC_TYPE, SupplyChainAccessService } from './supply-chain-access.service.js';
import { parseSyncChanges } from './sync-changes.validation.js';
import { isPlainObject } from '../../documents/fields/field-value.utils.js';


/** The body of `POST /orderbooks/{id}/requests`, and what the propagation passes to `createForBinding`. */
export interface SyncRequestInput {
  requestId?: string;
  requestType?: string;
  source?: Record<string, unknown>;
  changes: unknown[];
  /** pending (default): an open document request waits for accept/reject; accepted: merged at once; rejected: recorded only. */
  status?: SyncRequestStatus;
  message?: string;
  productInfo?: Record<string, unknown>;
}

export function syncRequestDto(record: SyncRequestRecord): SyncRequestResponseDto {
  return {
    requestId: record.id,
    orderBookId: record.orderBookId,
    bindingId: record.bindingId,
    requestType: record.requestType,
    source: record.source,
    changes: record.changes,
    status: record.status,
    message: record.message,
    documentRequestId: record.documentRequestId,
    productInfo: record.productInfo,
    reviewNote: record.reviewNote ?? null,
    decidedBy: record.decidedBy,
    decidedAt: record.decidedAt ? new Date(record.decidedAt).toISOString() : null,
    createdBy: record.createdBy,
    createdAt: new Date(record.createdAt).toISOString(),
  };
}

/**
 * Order-book sync requests (docs/supply-chain.md, "Sync requests"): a set of row changes proposed to an order book,
 * carried by a document request on `orderbook/{id}`. `accepted` merges it (one revision), `pending` leaves it open
 * until accept (merge) or reject (close), `rejected` records it only. Every creation records
 * `orderbook_sync_request_created` (`requestId`, `orderBookId`, `productInfo`, plus `status`, `bindingId`,
 * `requestType`) in the same transaction. Exported for the propagation (`createForBinding`, `decideAsSystem`).
 * A document request merged or closed directly (`/doc/orderbook/{id}/requests/{reqId}/merge|close`) moves its sync
 * request with it, in the same transaction (RequestHooks).
 */
@Injectable()
export class SyncRequestService implements OnModuleInit {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: SupplyChainAccessService,
    private readonly catalogs: CatalogRepository,
    private readonly repository: SyncRepository,
    private readonly writes: DocumentWritesService,
    private readonly requests: RequestsService,
    private readonly engine: ChangeEngineService,
    private readonly hooks: RequestHooks,
    private readonly outbox: OutboxService,
  ) {}

  onModuleInit(): void {
    this.hooks.onMerged((event) => this.documentRequestMerged(event));
    this.hooks.onClosed((event) => this.documentRequestClosed(event));
  }

  /** `POST /orderbooks/{id}/requests`: owners, admins and members of the buyer (order-book write right). */
  async create(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    input: SyncRequestInput,
  ): Promise<SyncRequestResponseDto> {
    const { orderBook, ctx } = await this.access.orderBook(principal, organizationId, orderBookId, 'write');
    return syncRequestDto(await this.createIn(ctx, orderBook, input, null));
  }

  /**
   * For the propagation: a sync request on the binding's order book, acting as the binding's creator (the buyer
   * user who attached it). `input.source` should name the catalog revision; `requestType` defaults to `catalog_sync`.
   */
  async createForBinding(binding: BindingRecord, input: SyncRequestInput): Promise<SyncRequestRecord> {
    const { ctx, orderBook } = await this.openAsBindingCreator(binding);
    return this.createIn(ctx, orderBook, { requestType: 'catalog_sync', ...input }, binding.id);
  }

  async list(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    query: { page: number; pageSize: number; status?: string; bindingId?: string },
  ): Promise<Page<SyncRequestResponseDto>> {
    const { orderBook } = await this.access.orderBook(principal, organizationId, orderBookId, 'read');
    const { items, total } = await this.repository.listRequests(
      organizationId,
      orderBook.id,
      { status: query.status as SyncRequestStatus | undefined, bindingId: query.bindingId },
      { limit: query.pageSize, offset: (query.page - 1) * query.pageSize },
    );
    return pageOf(items.map(syncRequestDto), total, query);
  }

  async get(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    requestId: string,
  ): Promise<SyncRequestResponseDto> {
    const { orderBook } = await this.access.orderBook(principal, organizationId, orderBookId, 'read');
    const key = syncRequestKey(requestId);
    const record = key ? await this.repository.findRequest(organizationId, orderBook.id, key) : null;
    if (!record) {
      throw notFound('sync request');
    }
    return syncRequestDto(record);
  }

  /** pending → accepted (merges the document request) or rejected (closes it); other states INVALID_STATE. */
  async decide(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    requestId: string,
    decision: 'accept' | 'reject',
    // Kept as `reviewNote`; the request's `message` is the proposer's and stays.
    reviewNote?: string,
  ): Promise<SyncRequestResponseDto> {
    const { orderBook, ctx } = await this.access.orderBook(principal, organizationId, orderBookId, 'write');
    return syncRequestDto(await this.decideIn(ctx, orderBook, requestId, decision, reviewNote ?? null));
  }

  /** For the propagation (e.g. a batch window closing): decide as the binding's creator. */
  async decideAsSystem(
    binding: BindingRecord,
    requestId: string,
    decision: 'accept' | 'reject',
  ): Promise<SyncRequestRecord> {
    const { ctx, orderBook } = await this.openAsBindingCreator(binding);
    return this.decideIn(ctx, orderBook, requestId, decision);
  }

  /** The binding's order book, opened as the binding's creator (the buyer user who attached it). */
  private async openAsBindingCreator(binding: BindingRecord) {
    const orderBook = await this.catalogs.findOrderBookById(binding.orderBookId);
    if (!orderBook) {
      throw notFound('order book');
    }
    const ctx = await this.access.openAsSystem(
      binding.createdBy,
      orderBook.organizationId,
      ORDERBOOK_DOC_TYPE,
      orderBook.id,
    );
    return { ctx, orderBook };
  }

  /**
   * pending → accepted (merges the document request) or rejected (closes it); any other state → INVALID_STATE
   * with `payload {requestId, status}`. The document request is merged or closed first, locking it as `/doc`
   * merge and close do, and the hooks move the sync request in the same transaction.
   */
  private async decideIn(
    ctx: DocumentContext,
    orderBook: OrderBookRecord,
    requestId: string,
    decision: 'accept' | 'reject',
    reviewNote: string | null = null,
  ): Promise<SyncRequestRecord> {
    type Outcome = { decided: SyncRequestRecord } | { refused: SyncRequestRecord };
    const outcome = await this.tx.run(async (): Promise<Outcome> => {
      // Decisions of one order book in turn: a second accept of a create of the same row then sees the row the first
      // created and applies as an update, as when accepted one after the other (instead of a row-exists CONFLICT).
      await this.repository.lockOrderBook(orderBook.id);
      const key = syncRequestKey(requestId);
      const record = key
        ? await this.repository.findRequest(orderBook.organizationId, orderBook.id, key)
        : null;
      if (!record) {
        throw notFound('sync request');
      }
      if (record.status !== 'pending') {
        return { refused: record };
      }
      if (record.documentRequestId) {
        const request = await this.engine.findRequest(ctx.document, record.documentRequestId);
        if (request.status !== 'open') {
          // Merged or closed through /doc before its sync request followed it: brought in step, then refused.
          const [followed] = await this.repository.followDocumentRequest(
            orderBook.organizationId,
            orderBook.id,
            request.id,
            request.status === 'merged' ? 'accepted' : 'rejected',
            request.mergedBy ?? request.closedBy ?? ctx.principal.userId,
          );
          return { refused: followed ?? record };
        }
        if (decision === 'accept') {
          if (!(await this.acceptRowsCreatedMeanwhile(ctx, record, record.documentRequestId))) {
            await this.mergeCarrier(ctx, record, record.documentRequestId);
          }
        } else {
          await this.requests.close(ctx, record.documentRequestId);
        }
      }
      const decided = await this.repository.decideRequest(
        record,
        decision === 'accept' ? 'accepted' : 'rejected',
        ctx.principal.userId,
        reviewNote,
      );
      return { decided };
    });
    if ('refused' in outcome) {
      throw new AppException(ErrorCode.INVALID_STATE, {
        details: [
          {
            field: 'status',
            reason: `only pending sync requests can be decided; this one is ${outcome.refused.status}`,
          },
        ],
        payload: { requestId: outcome.refused.id, status: outcome.refused.status },
      });
    }
    return outcome.decided;
  }

  /**
   * Merges the document request carrying a sync request. A merge conflict, or the order book's approval gate,
   * names the sync request (`requestId`, the id the client decides with) and, next to it, the document request
   * that met it (`documentRequestId`).
   */
  private async mergeCarrier(ctx: DocumentContext, record: SyncRequestRecord, documentRequestId: string): Promise<void> {
    try {
      await this.requests.merge(ctx, documentRequestId);
    } catch (error) {
      if (
        error instanceof AppException &&
        (error.code === ErrorCode.CONFLICT || error.code === ErrorCode.APPROVAL_REQUIRED) &&
        isPlainObject(error.options.payload)
      ) {
        throw new AppException(error.code, {
          ...error.options,
          payload: { ...error.options.payload, requestId: record.id, documentRequestId },
        });
      }
      throw error;
    }
  }

  /**
   * Accepting a sync request whose `create_row` rows were created meanwhile — typically two pending proposals for
   * the same new catalog row, accepted in arrival order: the second still says "create". The buyer accepts the
   * proposed values, so such a create applies as an update of that row (docs/supply-chain.md, "Sync requests").
   * The carrier cannot be edited, so its changes are written as a new request merged at once, the sync request is
   * moved onto it, and the old carrier is closed (its hook then finds no sync request to reject). Returns false when
   * the carrier merges as it is, or meets another conflict (the merge then refuses it as usual); an order book whose
   * workflow requires approval keeps its gate.
   */
  private async acceptRowsCreatedMeanwhile(
    ctx: DocumentContext,
    record: SyncRequestRecord,
    documentRequestId: string,
  ): Promise<boolean> {
    if (ctx.document.settings.workflow?.requiresApproval === true) {
      return false;
    }
    const { conflicts } = await this.requests.conflicts(ctx, documentRequestId);
    const creates = new Set(
      record.changes.filter((change) => change.operation === 'create_row').map((change) => change.rowId),
    );
    if (
      conflicts.length === 0 ||
      !conflicts.every((conflict) => conflict.type === 'row-exists' && creates.has(conflict.rowId ?? conflict.targetId))
    ) {
      return false;
    }
    const existing = new Set(conflicts.map((conflict) => conflict.rowId ?? conflict.targetId));
    const ops: ResolvedRowOp[] = record.changes.map((change, index) => ({
      operation:
        change.operation === 'delete_row'
          ? 'delete'
          : change.operation === 'update_row' || existing.has(change.rowId ?? '')
            ? 'update'
            : 'create',
      rowId: change.rowId ?? randomUUID(),
      values: valueEntries(change.values) ?? [],
      path: `changes[${index}]`,
    }));
    const title = `Sync request ${record.id} (${record.requestType}, ${ops.length} changes, accepted after its rows were created)`;
    const written = await this.writes.batch(ctx, ops, undefined, title, record.message ?? undefined);
    await this.repository.moveToDocumentRequest(record, written.requestId);
    await this.requests.close(ctx, documentRequestId);
    return true;
  }

  /** The sync requests carried by a merged order-book request are accepted (same transaction). */
  private async documentRequestMerged(event: RequestMerged): Promise<void> {
    await this.follow(event.document, event.request.id, 'accepted', event.mergedBy);
  }

  /** The pending sync requests carried by a closed order-book request are rejected (same transaction). */
  private async documentRequestClosed(event: RequestTouched): Promise<void> {
    await this.follow(event.document, event.request.id, 'rejected', event.userId);
  }

  private async follow(
    document: RequestMerged['document'],
    documentRequestId: string,
    status: 'accepted' | 'rejected',
    userId: string,
  ): Promise<void> {
    // An order book's document id is its UUID; other `orderbook` documents carry no sync requests.
    if (document.docType !== ORDERBOOK_DOC_TYPE || !isUuid(document.docId)) {
      return;
    }
    await this.repository.followDocumentRequest(
      document.organizationId,
      document.docId.toLowerCase(),
      documentRequestId,
      status,
      userId,
    );
  }

  private async createIn(
    ctx: DocumentContext,
    orderBook: OrderBookRecord,
    input: SyncRequestInput,
    bindingId: string | null,
  ): Promise<SyncRequestRecord> {
    const { changes, ops } = parseSyncChanges(input.changes);
    const requested = input.status ?? 'pending';
    const id = input.requestId === undefined ? randomUUID() : syncRequestKey(input.requestId);
    if (id === null) {
      // The DTO admits only SYNC_REQUEST_ID_PATTERN; a caller inside the service gets the same answer.
      throw AppException.validation([{ field: 'requestId', reason: SYNC_REQUEST_ID_RULE }]);
    }
    const requestType = input.requestType ?? 'manual';
    return this.tx.run(async () => {
      // Ids are unique within the organization (its primary key), not per order book.
      if (await this.repository.findRequestInOrganization(orderBook.organizationId, id)) {
        throw requestIdTaken(id);
      }
      const title = `Sync request ${id} (${requestType}, ${changes.length} changes)`;
      let documentRequestId: string | null = null;
      let status: SyncRequestStatus = requested;
      if (requested === 'accepted') {
        const written = await this.writes.batch(ctx, ops, undefined, title, input.message);
        documentRequestId = written.requestId;
        // The order book's workflow requires approval: its request stays open, so the sync request waits too.
        status = written.merged ? 'accepted' : 'pending';
      } else if (requested === 'pending') {
        documentRequestId = await this.writes.openRequest(ctx, ops, title, input.message);
      }
      const productInfo = input.productInfo ?? {
        changes: changes.length,
        rowIds: changes.slice(0, 20).map((change) => change.rowId),
      };
      const record = await this.repository.insertRequestIfNew({
        id,
        organizationId: orderBook.organizationId,
        orderBookId: orderBook.id,
        bindingId,
        requestType,
        source: input.source ?? {},
        changes,
        status,
        message: input.message ?? null,
        documentRequestId,
        productInfo,
        decidedBy: status === 'pending' ? null : ctx.principal.userId,
        createdBy: ctx.principal.userId,
      });
      if (!record) {
        // Taken by a concurrent creation since the check above.
        throw requestIdTaken(id);
      }
      await this.outbox.record({
        event: 'orderbook_sync_request_created',
        organizationId: orderBook.organizationId,
        workspaceId: null,
        docType: ORDERBOOK_DOC_TYPE,
        docId: orderBook.id,
        triggeredBy: ctx.principal.userId,
        payload: {
          requestId: record.id,
          orderBookId: orderBook.id,
          productInfo,
          status,
          requestType,
          bindingId,
          documentRequestId,
        },
      });
      return record;
    });
  }
}

function requestIdTaken(id: string): AppException {
  return new AppException(ErrorCode.ALREADY_EXISTS, {
    details: [{ field: 'requestId', reason: 'a sync request with this id exists in the organization' }],
    payload: { requestId: id },
  });
}
