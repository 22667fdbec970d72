import { EVENT_GROUPS } from '../../events/event-catalogue.js';

/** What decides which scope reads an event through the API: its type, and whether it names a document. */
export interface ScopedEvent {
  eventType: string;
  docType: string | null;
  docId: string | null;
}

export type EventReadScope = 'data:read' | 'doc:read';

const ROW_EVENTS: ReadonlySet<string> = new Set(EVENT_GROUPS.data);

/**
 * The scope a credential needs to read what an event carries through the API (spec 5.8; docs/webhooks.md, "What a
 * webhook may see"): row events (`data_*`: row values, row ids) are read with `data:read` (`GET /data`); every other
 * event of a document — requests, revisions, metadata, views, comments, approvals, order-book sync requests — with
 * `doc:read` (the routes that list them). An event that names no document needs no read scope.
 */
export function readScopeOf(event: ScopedEvent): EventReadScope | null {
  if (ROW_EVENTS.has(event.eventType)) {
    return 'data:read';
  }
  return event.docType !== null && event.docId !== null ? 'doc:read' : null;
}

/** Whether `scopes` read the event; null scopes (a webhook created before scopes were recorded) read everything. */
export function scopesRead(scopes: readonly string[] | null, event: ScopedEvent): boolean {
  const needed = readScopeOf(event);
  return scopes === null || needed === null || scopes.includes(needed);
}

/**
 * The scopes a webhook keeps after a PUT by a credential holding `callerScopes`: those it had that the caller also
 * holds (never more). A webhook without recorded scopes (null) takes the caller's.
 */
export function narrowedScopes(stored: readonly string[] | null, callerScopes: readonly string[]): string[] {
  const caller = normalizedScopes(callerScopes);
  return stored === null ? caller : caller.filter((scope) => stored.includes(scope));
}

/** Sorted and without repeats, as stored and answered. */
export function normalizedScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes)].sort();
}
