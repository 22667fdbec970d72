import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DomainEvent } from '../../events/domain-event.js';
import { isDomainEventType } from '../../events/event-catalogue.js';
import { OnDomainEvent } from '../../events/on-domain-event.decorator.js';
import { ComputedAccessService } from '../../documents/services/computed/computed-access.service.js';
import { WebhookDeliveryJob } from '../jobs/webhook-delivery.job.js';
import { type NewDelivery, WebhookDeliveryRepository } from '../repositories/webhook-delivery.repository.js';
import { WebhookRepository, type WebhookRow } from '../repositories/webhook.repository.js';
import { type EventPlace, WebhookAccessService } from '../services/webhook-access.service.js';
import { scopesRead } from '../services/webhook-event-scopes.js';
import { CONDITION_BUDGET, type FilterableDelivery, filterOutcome } from '../services/webhook-filter.js';

/** The delivery body of spec 6.1, as the filters read it. */
type Envelope = FilterableDelivery & { payload: Record<string, unknown> };

/**
 * Turns every committed catalogue event into one queued delivery per matching webhook of its organization.
 * Runs inside the outbox dispatch transaction (only database writes; idempotent by event id through the
 * unique (webhook_id, event_id) index), so an event is queued for its webhooks exactly when it is marked
 * dispatched. The delivery body is fixed here, once: retries and redeliveries send the same bytes. Only events
 * the credential that set the webhook up could read (its scopes) and its creator may read (their rights and the
 * document's view permissions) are queued (docs/webhooks.md, "What a webhook may see").
 * Any event type of the catalogue is handled the same way, whichever module records it.
 */
@Injectable()
export class WebhookEnqueueListener {
  constructor(
    private readonly tx: TransactionHost,
    private readonly webhooks: WebhookRepository,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly job: WebhookDeliveryJob,
    private readonly access: WebhookAccessService,
    private readonly computedAccess: ComputedAccessService,
  ) {}

  @OnDomainEvent('*')
  async onEvent(event: DomainEvent): Promise<void> {
    if (!event.organizationId || !isDomainEventType(event.event)) {
      return;
    }
    // Most organizations have no webhook: ask once per dispatched batch, not once per event. A webhook created
    // after this read is newer than every event of the batch (all committed before it was claimed), so it would
    // not receive them anyway (only events after a webhook's creation are delivered).
    const organizationId = event.organizationId;
    if (!(await this.tx.memo(this, organizationId, () => this.webhooks.anyInOrganization(organizationId)))) {
      return;
    }
    const subscribed = await this.webhooks.subscribedTo(event.organizationId, event.event, event.id);
    const place: EventPlace = {
      organizationId,
      workspaceId: event.workspaceId,
      docType: event.docType,
      docId: event.docId,
    };
    // An event of a deleted document whose id a later document already uses is the deleted one's: read by no one.
    if (subscribed.length > 0 && (await this.access.namesLaterDocument(place, new Date(event.timestamp)))) {
      return;
    }
    const queued: NewDelivery[] = [];
    for (const webhook of subscribed) {
      const deliveryId = randomUUID();
      const recorded: Envelope = {
        event: event.event,
        timestamp: event.timestamp,
        webhookId: webhook.id,
        deliveryId,
        organizationId: event.organizationId,
        workspaceId: event.workspaceId,
        docType: event.docType,
        docId: event.docId,
        triggeredBy: event.triggeredBy,
        payload: event.payload,
      };
      if (
        !scopesRead(webhook.credentialScopes, { eventType: event.event, ...place }) ||
        !(await this.creatorMayRead(webhook, place))
      ) {
        continue;
      }
      // The body carries what the creator may see, and the filters look at nothing else (a condition on a hidden
      // value would otherwise tell it by whether the event arrives).
      const envelope = await this.asSeenByCreator(webhook, place, recorded);
      const outcome = filterOutcome(webhook.filters, envelope);
      if (outcome === 'no-match') {
        continue;
      }
      queued.push({
        id: deliveryId,
        webhookId: webhook.id,
        organizationId: event.organizationId,
        workspaceId: event.workspaceId,
        eventId: event.id,
        eventSeq: event.seq,
        eventType: event.event,
        docType: event.docType,
        docId: event.docId,
        triggeredBy: event.triggeredBy,
        kind: 'event',
        requestBody: JSON.stringify(envelope),
        retriesLeft: webhook.maxRetries,
        // Not sent, but recorded: silently dropping an event its filters could not decide would hide it from the
        // owner (docs/webhooks.md, "Filter work").
        skippedReason:
          outcome === 'over-budget'
            ? `the filter conditions could not be evaluated within ${CONDITION_BUDGET} values of work for this event`
            : null,
      });
    }
    if ((await this.deliveries.enqueue(queued)) > 0) {
      this.tx.afterCommit(() => this.job.kick());
    }
  }

  /**
   * Row values of lookups over documents the creator cannot read left out (docs/formulas.md, "Access"); asked once
   * per creator and document in a dispatch transaction, only for events that carry row values.
   */
  private async asSeenByCreator(
    webhook: WebhookRow,
    place: EventPlace,
    envelope: Envelope,
  ): Promise<Envelope> {
    const { docType, docId } = place;
    if (docType === null || docId === null || !Array.isArray(envelope.payload.values)) {
      return envelope;
    }
    const document = { organizationId: place.organizationId, workspaceId: place.workspaceId, docType, docId };
    const key = `mask:${JSON.stringify([webhook.createdBy, place.organizationId, place.workspaceId, docType, docId])}`;
    const mask = await this.tx.memo(this, key, () =>
      this.computedAccess.eventMask(document, webhook.createdBy),
    );
    return mask.event(envelope);
  }

  /**
   * An event the webhook's creator may not read is not queued for it at all (no body stored, no record naming its
   * document); asked once per creator and document (or workspace) in a dispatch transaction, where the document
   * itself is read once for all creators. Re-checked before every attempt.
   */
  private creatorMayRead(webhook: WebhookRow, place: EventPlace): Promise<boolean> {
    const key = `read:${JSON.stringify([webhook.createdBy, place.organizationId, place.workspaceId, place.docType, place.docId])}`;
    return this.tx.memo(this, key, () => this.access.creatorMayRead(webhook.createdBy, place));
  }
}
