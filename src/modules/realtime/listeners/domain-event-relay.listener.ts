import { Injectable, Logger } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DomainEvent } from '../../events/domain-event.js';
import { OnDomainEvent } from '../../events/on-domain-event.decorator.js';
import { type BusMessage, RealtimeBus } from '../services/realtime-bus.service.js';

type EventNotice = Extract<BusMessage, { t: 'event' }>;

/**
 * Tells every instance that a document has a new committed event. Runs inside the outbox dispatch transaction,
 * which exactly one instance holds per event, and publishes once that transaction commits: never for a dispatch
 * that rolls back, and without a query of its own inside the dispatch (its subscribers run concurrently on one
 * connection). Only the event's coordinates travel — receivers read the event from the outbox, so payload size
 * never matters, and a notice lost to a crash is made good by the document's next one (receivers read every event
 * after their clients' positions) or by a client's resume.
 */
@Injectable()
export class DomainEventRelayListener {
  private readonly logger = new Logger(DomainEventRelayListener.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly bus: RealtimeBus,
  ) {}

  @OnDomainEvent('*')
  relay(event: DomainEvent): void {
    if (!event.docType || !event.docId || !event.organizationId) {
      return;
    }
    const notice: EventNotice = {
      t: 'event',
      org: event.organizationId,
      ws: event.workspaceId,
      dt: event.docType,
      di: event.docId,
      seq: event.seq,
    };
    // A notice only wakes the document's readers, who then read every event after their position: one notice per
    // document and dispatch batch (its last event) says as much as one per event, for a fraction of the NOTIFYs.
    this.tx.collectAfterCommit(this, notice, (notices) => {
      const lastPerDocument = new Map<string, EventNotice>();
      for (const each of notices) {
        lastPerDocument.set(`${each.org}/${each.ws ?? ''}/${each.dt}/${each.di}`, each);
      }
      for (const each of lastPerDocument.values()) {
        this.bus.publish(each).catch((error: unknown) => this.logger.warn({ err: error }, 'realtime event notice failed'));
      }
    });
  }
}
