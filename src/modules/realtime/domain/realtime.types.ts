import type { Principal } from '../../../common/auth/principal.js';
import type { EventPosition, PositionedEvent } from './event-position.js';
import type { CloseReason } from './realtime-protocol.js';
import type { ServerKind } from './realtime-messages.js';

/** The document a stream or session is bound to: its tenant-scoped identity (docs/documents.md). */
export interface DocRef {
  uuid: string;
  organizationId: string;
  workspaceId: string | null;
  docType: string;
  docId: string;
  /** The workspace the document was opened through (its own, or one that references it), for re-checks. */
  viaWorkspaceId: string | null;
}

/** The outbox's tenant + document coordinates as one string (events carry these, not the document's uuid). */
export function eventKey(
  organizationId: string | null,
  workspaceId: string | null,
  docType: string,
  docId: string,
): string {
  return JSON.stringify([organizationId, workspaceId, docType, docId]);
}

export function eventKeyOf(doc: DocRef): string {
  return eventKey(doc.organizationId, doc.workspaceId, doc.docType, doc.docId);
}

/** One event as the stream, the socket and the history carry it: spec 6.1's envelope plus its stream id. */
export interface StreamEvent {
  /**
   * The outbox sequence number: the SSE `id:` and `Last-Event-ID`. The stream's order is the events' position
   * (event-position.ts), which is `id` order except where transactions committed out of numbering order.
   */
  id: string;
  eventId: string;
  event: string;
  timestamp: string;
  organizationId: string | null;
  workspaceId: string | null;
  docType: string | null;
  docId: string | null;
  triggeredBy: string | null;
  payload: Record<string, unknown>;
}

/**
 * What a credential was at connect time, so a long-lived stream can be re-checked without keeping the secret:
 * the session, API key or OAuth client behind it and when it expires.
 */
export interface CredentialBinding {
  userId: string;
  kind: Principal['kind'];
  scopes: string[];
  sessionId?: string;
  apiKeyId?: string;
  clientId?: string;
  tokenId?: string;
  /** Epoch seconds; absent for credentials without a fixed expiry known here. */
  expiresAt?: number;
}

/** A connected stream or socket, as the hub sees it. */
export interface HubClient {
  readonly sessionId: string;
  readonly userId: string;
  readonly doc: DocRef;
  readonly transport: 'sse' | 'ws';
  /** Position of the last event delivered; events at or before it are never sent again (catch-up and live may race). */
  position: EventPosition;
  /** Ids of events after `position` that committed before the client came (passed over, not delivered). */
  skip: Set<string>;
  /** False while catch-up runs: live events wait in `pending`. */
  live: boolean;
  pending: PositionedEvent[];
  /** Re-checks the credential and the read access; the hub calls it every REALTIME_ACCESS_RECHECK_MS. */
  readonly accessKey: string;
  recheck(): Promise<boolean>;
  deliverEvent(event: StreamEvent): void;
  /** Keeps proxies from closing an idle connection (an SSE comment, a WebSocket ping). */
  heartbeat(): void;
  push(kind: ServerKind, payload: Record<string, unknown>): void;
  close(reason: CloseReason): void;
}
