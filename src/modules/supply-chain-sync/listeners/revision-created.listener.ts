import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import type { BindingRecord, CatalogRecord } from '../../supply-chain/domain/supply-chain.types.js';
import type { DomainEvent } from '../../events/domain-event.js';
import { OnDomainEvent } from '../../events/on-domain-event.decorator.js';
import { ConnectorRunRepository } from '../repositories/connector-run.repository.js';
import { PropagationJobRepository } from '../repositories/propagation-job.repository.js';
import { RevisionOriginRepository } from '../repositories/revision-origin.repository.js';
import { SupplyChainPort } from '../services/supply-chain.port.js';
import { SyncClock } from '../services/sync-clock.js';
import { SYNC_TITLE_PREFIX, SyncDocumentGateway } from '../services/sync-document.gateway.js';
import { SyncWorker } from '../jobs/sync.worker.js';
import { alignGeneratedFields, generatedSourcesOf } from '../domain/generated-fields.js';

/** Reads the catalog's definitions only (no user acts). */
const SYSTEM_READER = '00000000-0000-0000-0000-000000000000';

interface RevisionCreatedPayload {
  revisionId?: string;
  version?: number;
  createdAt?: string;
}

/**
 * Spec 3 rule 1 → 2: a merge of a catalog produced a revision. Runs in the outbox dispatch transaction, after the
 * merge committed: enqueues one ledger job per active binding of every active connection of the catalog (unique per
 * (binding, revision), so a replayed event adds nothing), and one run per realtime connector reading the document
 * (or writing it, when bidirectional — unless the revision came from that connector: loop prevention). The work
 * itself runs in SyncWorker, one binding per transaction, so a failing binding holds back no other. Before a
 * binding's job is queued, its order book's generated fields are brought in step with the catalog's fields (new
 * select options, renamed labels): the job then writes the catalog's values into fields that hold them.
 */
@Injectable()
export class RevisionCreatedListener {
  constructor(
    private readonly tx: TransactionHost,
    private readonly port: SupplyChainPort,
    private readonly jobs: PropagationJobRepository,
    private readonly runs: ConnectorRunRepository,
    private readonly origins: RevisionOriginRepository,
    private readonly documents: SyncDocumentGateway,
    private readonly clock: SyncClock,
    private readonly worker: SyncWorker,
  ) {}

  @OnDomainEvent('revision_created')
  async onRevision(event: DomainEvent): Promise<void> {
    const payload = event.payload as RevisionCreatedPayload;
    if (
      !event.organizationId ||
      event.workspaceId !== null ||
      !event.docType ||
      !event.docId ||
      !payload.revisionId
    ) {
      return;
    }
    let queued = false;
    if (event.docType === 'catalog') {
      queued = (await this.enqueueBindings(event.organizationId, event.docId, payload)) || queued;
    }
    if (event.docType === 'catalog' || event.docType === 'orderbook') {
      queued =
        (await this.enqueueConnectors(
          event.organizationId,
          event.docType,
          event.docId,
          payload.revisionId,
        )) || queued;
    }
    if (queued) {
      this.tx.afterCommit(() => this.worker.kick());
    }
  }

  private async enqueueBindings(
    organizationId: string,
    catalogId: string,
    payload: RevisionCreatedPayload,
  ): Promise<boolean> {
    const catalog = await this.port.catalog(organizationId, catalogId);
    if (!catalog) {
      return false;
    }
    let queued = false;
    const now = this.clock.now();
    const aligned = new Set<string>();
    let catalogFields: readonly FieldDefinition[] | null | undefined;
    const fieldsOfCatalog = async (): Promise<readonly FieldDefinition[] | null> => {
      catalogFields ??=
        (await this.documents.open(organizationId, 'catalog', catalogId, SYSTEM_READER))?.document.metadata
          .fields ?? null;
      return catalogFields;
    };
    for (const connection of await this.port.activeConnections(catalog.id)) {
      const window = connection.propagationEvents.batchMerge
        ? Math.max(0, connection.propagationEvents.batchWindowSeconds)
        : 0;
      for (const binding of await this.port.activeBindings(connection.id)) {
        if (!aligned.has(binding.orderBookId)) {
          aligned.add(binding.orderBookId);
          await this.alignGeneratedFields(binding, catalog, fieldsOfCatalog, payload);
        }
        await this.jobs.enqueue(
          {
            organizationId: binding.organizationId,
            bindingId: binding.id,
            orderBookId: binding.orderBookId,
            catalogDocumentId: catalog.documentId,
            catalogRevisionId: payload.revisionId as string,
            catalogRevisionVersion: Number(payload.version ?? 0),
            revisionCreatedAt: payload.createdAt ? new Date(payload.createdAt) : now,
          },
          now,
          window,
        );
        queued = true;
      }
    }
    return queued;
  }

  /**
   * The order book's fields generated from this catalog, in step with the catalog's fields now (docs/supply-chain.md,
   * "Generated fields in step"): one metadata change merged at once, acting as the propagation does, under the order
   * book's propagation lock (so it never lands between a running job's read and write), its revision recorded as the
   * binding's. Order books already in step cost one read.
   */
  private async alignGeneratedFields(
    binding: BindingRecord,
    catalog: CatalogRecord,
    fieldsOfCatalog: () => Promise<readonly FieldDefinition[] | null>,
    payload: RevisionCreatedPayload,
  ): Promise<void> {
    const orderBook = (await this.port.bindingContext(binding.id))?.orderBook;
    const generated = generatedSourcesOf(orderBook?.generatedFields ?? [], catalog.id);
    if (!orderBook || generated.length === 0) {
      return;
    }
    const catalogFields = await fieldsOfCatalog();
    const actorId = await this.port.actingUser(binding.organizationId, binding.createdBy);
    const open = () => this.documents.open(binding.organizationId, 'orderbook', orderBook.id, actorId);
    const before = await open();
    if (
      !catalogFields ||
      !before ||
      !alignGeneratedFields(before.document.metadata.fields, catalogFields, generated)
    ) {
      return;
    }
    await this.port.lockOrderBook(orderBook.id);
    const orderCtx = await open();
    const outcome = orderCtx
      ? await this.documents.alignGeneratedFields(
          orderCtx,
          catalogFields,
          generated,
          `${SYNC_TITLE_PREFIX} ${catalog.name} revision ${Number(payload.version ?? 0)}: fields in step with the catalog`,
        )
      : null;
    if (orderCtx && outcome?.merge) {
      await this.origins.recordBindingWrite(outcome.merge.revision.id, binding, orderCtx.document.uuid, {
        documentId: catalog.documentId,
        revisionId: payload.revisionId ?? null,
      });
    }
  }

  private async enqueueConnectors(
    organizationId: string,
    docType: string,
    docId: string,
    revisionId: string,
  ): Promise<boolean> {
    const ctx = await this.documents.open(organizationId, docType, docId, SYSTEM_READER);
    if (!ctx) {
      return false;
    }
    const connectors = await this.port.connectorsOfDocument(organizationId, ctx.document.uuid);
    if (connectors.length === 0) {
      return false;
    }
    const origin = await this.origins.find(revisionId);
    let queued = false;
    for (const connector of connectors) {
      if (connector.status !== 'active' || connector.syncMode !== 'realtime') {
        continue;
      }
      // Loop prevention: a revision this connector wrote is not sent back through it.
      if (origin?.originKind === 'connector' && origin.originId === connector.id) {
        continue;
      }
      const direction =
        connector.sourceDocumentId === ctx.document.uuid
          ? 'forward'
          : connector.bidirectional
            ? 'reverse'
            : null;
      if (!direction) {
        continue;
      }
      queued =
        (await this.runs.enqueueRealtime(organizationId, connector.id, direction, revisionId)) || queued;
    }
    return queued;
  }
}
