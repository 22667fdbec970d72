import { Injectable } from '@nestjs/common';
import { OutboxService } from '../../events/outbox.service.js';
import { UsersService } from '../../identity/services/users.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import type { PlannedChange } from '../domain/binding-plan.js';
import type { PropagationJob } from '../repositories/propagation-job.repository.js';
import type { BindingContext } from './supply-chain.port.js';

/** Rows summarized in `productInfo`. */
const PRODUCT_INFO_ROWS = 20;

/** `productInfo` of the event: the catalog and the first rows' names (the first text field of the catalog). */
export function productInfoOf(
  context: BindingContext,
  group: readonly PlannedChange[],
  sourceRows: ReadonlyMap<string, Record<string, unknown>>,
  catalogFields: readonly { id: string; name: string; type: string }[],
  jobs: readonly PropagationJob[],
): Record<string, unknown> {
  const nameField = catalogFields.find((field) => field.type === 'text') ?? catalogFields[0];
  return {
    catalogId: context.catalog.id,
    catalogName: context.catalog.name,
    connectionId: context.connection.id,
    supplierOrganizationId: context.catalog.organizationId,
    catalogRevisionIds: jobs.map((job) => job.catalogRevisionId),
    rowCount: group.length,
    created: group.filter((change) => change.kind === 'create').length,
    updated: group.filter((change) => change.kind === 'update').length,
    deleted: group.filter((change) => change.kind === 'delete').length,
    products: group.slice(0, PRODUCT_INFO_ROWS).map((change) => ({
      sourceRowId: change.sourceRowId,
      rowId: change.targetRowId,
      operation: change.kind,
      name: nameField ? (sourceRows.get(change.sourceRowId)?.[nameField.id] ?? null) : null,
    })),
  };
}

/** Spec 3 rule 7: tells the buyer about a sync request, in the transaction that created it. */
@Injectable()
export class SyncAnnouncer {
  constructor(
    private readonly outbox: OutboxService,
    private readonly notifier: NotifierService,
    private readonly users: UsersService,
  ) {}

  /** Rule 7: the buyer is told (an e-mail to the binding's creator and the webhook event), in this transaction. */
  async announce(
    context: BindingContext,
    syncRequestId: string,
    productInfo: Record<string, unknown>,
    status: 'accepted' | 'pending',
    documentRequestId: string,
  ): Promise<void> {
    const { binding, orderBook } = context;
    await this.outbox.record({
      event: 'orderbook_sync_request_created',
      organizationId: binding.organizationId,
      workspaceId: null,
      docType: 'orderbook',
      docId: orderBook.id,
      triggeredBy: binding.createdBy,
      payload: {
        requestId: syncRequestId,
        orderBookId: orderBook.id,
        productInfo,
        status,
        requestType: 'catalog_sync',
        bindingId: binding.id,
        documentRequestId,
      },
    });
    const user = (await this.users.summaries([binding.createdBy])).get(binding.createdBy);
    if (user?.email) {
      const subject =
        status === 'pending'
          ? `Catalog changes wait for your acceptance: ${orderBook.name}`
          : `Catalog changes applied: ${orderBook.name}`;
      await this.notifier.send({
        channel: 'email',
        to: user.email,
        kind: 'orderbook_sync_request',
        subject,
        body: `${subject}. ${String(productInfo.rowCount)} row change(s) from catalog ${context.catalog.name} (sync request ${syncRequestId}).`,
        data: { requestId: syncRequestId, orderBookId: orderBook.id, bindingId: binding.id, status },
        userId: binding.createdBy,
      });
    }
  }
}
