/**
 * The event catalogue of spec 6.2: every domain event type a module records in the outbox, by group. Webhook
 * subscriptions are validated against it, the realtime stream carries these names, and docs list them from here.
 * A module that records a new event type adds it here first.
 */
export const EVENT_GROUPS = {
  request: ['request_created', 'request_merged', 'request_closed', 'request_reopened'],
  approval: ['approval_started', 'approval_approved', 'approval_rejected', 'approval_canceled', 'approval_node_completed'],
  comment: ['comment_created', 'comment_updated', 'comment_deleted', 'comment_resolved', 'comment_mentioned'],
  metadata: ['metadata_updated', 'metadata_field_added', 'metadata_field_updated', 'metadata_field_deleted'],
  view: ['view_created', 'view_updated', 'view_deleted', 'view_default_changed'],
  data: ['data_row_created', 'data_row_updated', 'data_row_deleted', 'data_bulk_operation'],
  revision: ['revision_created', 'revision_reverted'],
  supplyChain: ['orderbook_sync_request_created'],
} as const;

export type EventGroup = keyof typeof EVENT_GROUPS;
export type DomainEventType = (typeof EVENT_GROUPS)[EventGroup][number];

export const DOMAIN_EVENT_TYPES: readonly DomainEventType[] = Object.values(EVENT_GROUPS).flat();

export function isDomainEventType(value: string): value is DomainEventType {
  return (DOMAIN_EVENT_TYPES as readonly string[]).includes(value);
}
