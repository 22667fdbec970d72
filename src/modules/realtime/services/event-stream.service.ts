import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppException } from '../../../common/errors/app.exception.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import type { DocumentScope } from '../../documents/services/document-access.service.js';
import { eventIdProblem } from '../domain/event-id.js';
import { CLOSE_CODES, type CloseReason, STREAM_EVENTS } from '../domain/realtime-protocol.js';
import type { ServerKind } from '../domain/realtime-messages.js';
import { type EventPosition, type PositionedEvent, START_POSITION } from '../domain/event-position.js';
import type { DocRef, HubClient, StreamEvent } from '../domain/realtime.types.js';
import { type RealtimeIdentity, RealtimeAuthService } from './realtime-auth.service.js';
import { RealtimeHub } from './realtime-hub.service.js';

/** One server-sent event (text/event-stream framing: every data line prefixed, a blank line ends it). */
export function formatSse(event: { id?: string; event?: string; data: unknown }): string {
  const lines: string[] = [];
  if (event.id !== undefined) {
    lines.push(`id: ${event.id}`);
  }
  if (event.event !== undefined) {
    lines.push(`event: ${event.event}`);
  }
  for (const line of JSON.stringify(event.data).split('\n')) {
    lines.push(`data: ${line}`);
  }
  return `${lines.join('\n')}\n\n`;
}

/** One serialization per event, however many streams carry it (the hub hands every client the same object). */
const framed = new WeakMap<StreamEvent, string>();

export function sseFrameOf(event: StreamEvent): string {
  let frame = framed.get(event);
  if (frame === undefined) {
    frame = formatSse({ id: event.id, event: event.event, data: event });
    framed.set(event, frame);
  }
  return frame;
}

/**
 * `Last-Event-ID` (header, as EventSource sends it on reconnect) or `lastEventId` (query, checked by the route's
 * query DTO by the same rule); null when absent. The header wins: EventSource reconnects with the URL it was
 * opened with, so its query names where the stream first started and the header where it stopped.
 */
export function lastEventIdOf(request: Request): bigint | null {
  const header = request.headers['last-event-id'];
  if (header !== undefined && header !== '') {
    const raw = Array.isArray(header) ? header : header.trim();
    const problem = eventIdProblem('Last-Event-ID', raw);
    if (problem !== null || Array.isArray(raw)) {
      throw AppException.validation([
        { field: 'Last-Event-ID', reason: problem ?? 'Last-Event-ID must be given once' },
      ]);
    }
    return BigInt(raw);
  }
  const query = request.query.lastEventId;
  if (query === undefined || query === '') {
    return null;
  }
  const problem = eventIdProblem('lastEventId', query);
  if (problem) {
    throw AppException.validation([{ field: 'lastEventId', reason: problem }]);
  }
  return BigInt(query as string);
}

/** Status and headers of a stream (also the whole answer to HEAD). */
function streamHeaders(response: Response): void {
  response.status(200);
  response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  response.setHeader('Cache-Control', 'no-cache, no-transform');
  response.setHeader('X-Accel-Buffering', 'no');
}

class SseClient implements HubClient {
  readonly sessionId = randomUUID();
  position: EventPosition = START_POSITION;
  skip = new Set<string>();
  live = false;
  pending: PositionedEvent[] = [];
  private closed = false;

  constructor(
    private readonly identity: RealtimeIdentity,
    private readonly response: Response,
    private readonly maxBufferedBytes: number,
    private readonly onClose: (client: SseClient) => void,
    private readonly check: (identity: RealtimeIdentity) => Promise<boolean>,
  ) {}

  get userId(): string {
    return this.identity.principal.userId;
  }

  get doc(): DocRef {
    return this.identity.doc;
  }

  get accessKey(): string {
    return this.identity.accessKey;
  }

  readonly transport = 'sse' as const;

  recheck(): Promise<boolean> {
    return this.check(this.identity);
  }

  write(chunk: string): void {
    if (this.closed) {
      return;
    }
    // A client that does not read lets the socket's queue grow; past the bound it is dropped, not buffered.
    if (this.response.writableLength > this.maxBufferedBytes) {
      this.close('SLOW_CONSUMER');
      return;
    }
    this.response.write(chunk);
  }

  deliverEvent(event: StreamEvent): void {
    this.write(sseFrameOf(event));
  }

  heartbeat(): void {
    this.write(`: heartbeat ${new Date().toISOString()}\n\n`);
  }

  push(_kind: ServerKind, _payload: Record<string, unknown>): void {
    // The stream is read-only and carries domain events only; collaboration messages go to sockets.
  }

  close(reason: CloseReason): void {
    if (this.closed) {
      return;
    }
    if (reason === 'SLOW_CONSUMER') {
      this.closed = true;
      this.response.destroy();
    } else {
      this.response.write(
        formatSse({ event: STREAM_EVENTS.STREAM_END, data: { reason, code: CLOSE_CODES[reason] } }),
      );
      this.closed = true;
      this.response.end();
    }
    this.onClose(this);
  }

  markClosed(): void {
    this.closed = true;
  }
}

/**
 * GET /realtime/doc/{docType}/{docId}/events/stream (spec 6.3): authenticates (bearer or connect token),
 * then streams the document's committed events with `id:` = event id, resumes after `Last-Event-ID` within the
 * retention window, sends a `retry:` hint and heartbeat comments, and ends with a `stream_end` event when
 * access is lost or a manager disconnects everyone.
 */
@Injectable()
export class EventStreamService {
  private readonly logger = new Logger(EventStreamService.name);

  constructor(
    private readonly auth: RealtimeAuthService,
    private readonly hub: RealtimeHub,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Failures before the stream starts are thrown (rendered as the JSON envelope with their status). */
  async open(
    request: Request,
    response: Response,
    docType: string,
    docId: string,
    scope: DocumentScope,
  ): Promise<void> {
    // The input first, like the query (checked by the route's DTO before this runs).
    const lastEventId = lastEventIdOf(request);
    const identity = await this.auth.authenticateRequest(request, docType, docId, scope);
    if (request.method === 'HEAD') {
      // Express routes HEAD to this GET handler. HEAD has no body, so a stream would only hold a connection (and
      // a place under the limits) open for nothing: the same status and headers, checked the same way, then end.
      streamHeaders(response);
      response.end();
      return;
    }
    const { realtime } = this.config;
    const client = new SseClient(
      identity,
      response,
      realtime.maxBufferedBytes,
      (closed) => this.hub.detach(closed),
      (who) => this.auth.stillAllowed(who),
    );
    const { gap } = await this.hub.attach(client, lastEventId);
    if (request.destroyed || response.destroyed) {
      // The client went away while the stream was being set up: its 'close' has already fired.
      this.hub.detach(client);
      return;
    }
    request.socket.setNoDelay(true);
    request.socket.setTimeout(0);
    streamHeaders(response);
    response.setHeader('Connection', 'keep-alive');
    response.flushHeaders();
    response.on('close', () => {
      client.markClosed();
      this.hub.detach(client);
    });
    response.write(
      `retry: ${realtime.sseRetryMs}\n: stream of ${identity.doc.docType}/${identity.doc.docId}\n\n`,
    );
    if (gap) {
      client.write(
        formatSse({
          event: STREAM_EVENTS.RESYNC_REQUIRED,
          data: {
            reason: 'RETENTION_EXCEEDED',
            lastEventId: lastEventId?.toString() ?? null,
            retentionSeconds: realtime.streamRetentionSeconds,
          },
        }),
      );
    }
    try {
      await this.hub.catchUp(client, lastEventId !== null);
    } catch (error) {
      this.logger.error({ err: error }, 'event stream catch-up failed');
      client.close('GOING_AWAY');
    }
  }
}
