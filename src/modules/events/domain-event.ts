/**
 * The event envelope of spec 6.1 (less the per-webhook `webhookId`/`deliveryId`, which deliveries add),
 * plus its id, its position in the log and the tenant it belongs to.
 */
export interface DomainEvent<P extends Record<string, unknown> = Record<string, unknown>> {
  id: string;
  seq: string;
  event: string;
  timestamp: string;
  organizationId: string | null;
  workspaceId: string | null;
  docType: string | null;
  docId: string | null;
  triggeredBy: string | null;
  payload: P;
}

/** What a service supplies when it records an event; the rest is filled in by the outbox. */
export interface NewDomainEvent<P extends Record<string, unknown> = Record<string, unknown>> {
  event: string;
  organizationId?: string | null;
  workspaceId?: string | null;
  docType?: string | null;
  docId?: string | null;
  triggeredBy?: string | null;
  payload: P;
  /**
   * Payload keys whose value only the statement recording the event knows (outboxInsertSql with stamps, as the
   * statement that numbers a revision records its merge's events): `revisionVersion` is the revision number that
   * statement allocates, `committedAt` the transaction's time (ISO 8601, milliseconds, UTC).
   */
  commitStamps?: Record<string, CommitStamp>;
}

/** What an event names of the document it happened to (any document record has these). */
export interface EventDocument {
  organizationId: string;
  workspaceId: string | null;
  docType: string;
  docId: string;
}

/** An event of a document: its tenant ids, type and id, who did it, and the payload. */
export function documentEvent<P extends Record<string, unknown>>(
  document: EventDocument,
  event: string,
  triggeredBy: string | null,
  payload: P,
): NewDomainEvent<P> {
  return {
    event,
    organizationId: document.organizationId,
    workspaceId: document.workspaceId,
    docType: document.docType,
    docId: document.docId,
    triggeredBy,
    payload,
  };
}

export type CommitStamp = 'revisionVersion' | 'committedAt';

/**
 * The event emitter runs with wildcards on ('.' delimiter), so DOMAIN_EVENT_ANY receives every event.
 * In-process subscribers listen with @OnDomainEvent('request_merged') or @OnDomainEvent('*')
 * (on-domain-event.decorator.ts; a bare @OnEvent would swallow subscriber errors, so a failed subscriber
 * would not be retried). They run inside the dispatch transaction, so what they write commits together with the event being
 * marked dispatched: a subscriber must only write to the database (for example enqueue a webhook delivery),
 * never call out over the network, and must be idempotent by event id (a crash after the subscriber ran
 * but before commit replays the event).
 */
export const DOMAIN_EVENT_PREFIX = 'domain.';
export const DOMAIN_EVENT_ANY = 'domain.*';
export function domainEventName(event: string): string {
  return `${DOMAIN_EVENT_PREFIX}${event}`;
}
