import { Injectable } from '@nestjs/common';
import { OutboxService } from '../../events/outbox.service.js';
import { UsersService } from '../../identity/services/users.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import type { PlannedChange } from '../domain/binding-plan.types.js';
import type { PropagationJob } from '../repositories/propagation-job.repository.js';
import { type BindingContext, SupplyChainPort } from './supply-chain.port.js';

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
    private readonly port: SupplyChainPort,
  ) {}

  /**
   * Rule 7: the buyer is told — the webhook event (triggered by `actorId`, who the propagation acted as) and, with
   * `mail`, an e-mail to the binding's creator while an active member of the buyer organization, else to its active
   * owners and admins (never to someone who left; docs/supply-chain.md, "Who the propagation acts as, who is told").
   * All in this transaction.
   */
  async announce(
    context: BindingContext,
    syncRequestId: string,
    productInfo: Record<string, unknown>,
    status: 'accepted' | 'pending',
    documentRequestId: string,
    actorId: string,
    mail = true,
  ): Promise<void> {
    const { binding, orderBook } = context;
    await this.outbox.record({
      event: 'orderbook_sync_request_created',
      organizationId: binding.organizationId,
      workspaceId: null,
      docType: 'orderbook',
      docId: orderBook.id,
      triggeredBy: actorId,
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
    if (!mail) {
      return;
    }
    const recipients = await this.port.recipients(binding.organizationId, binding.createdBy);
    const users = await this.users.summaries(recipients);
    const subject =
      status === 'pending'
        ? `Catalog changes wait for your acceptance: ${orderBook.name}`
        : `Catalog changes applied: ${orderBook.name}`;
    for (const userId of recipients) {
      const email = users.get(userId)?.email;
      if (!email) {
        continue;
      }
      await this.notifier.send({
        channel: 'email',
        to: email,
        kind: 'orderbook_sync_request',
        subject,
        body: `${subject}. ${String(productInfo.rowCount)} row change(s) from catalog ${context.catalog.name} (sync request ${syncRequestId}).`,
        data: { requestId: syncRequestId, orderBookId: orderBook.id, bindingId: binding.id, status },
        userId,
      });
    }
  }
}
