import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { ComputedAccessService } from '../../documents/services/computed/computed-access.service.js';
import { type CloseReason } from '../domain/realtime-protocol.js';
import {
  type DocRef,
  eventKey,
  eventKeyOf,
  type HubClient,
  type StreamEvent,
} from '../domain/realtime.types.js';
import { RealtimeEventRepository } from '../repositories/realtime-event.repository.js';
import { RealtimeBus } from './realtime-bus.service.js';

const PAGE = 500;
/** How long shutting down waits for the closed sessions' clean-ups (their notices to the other instances). */
const SHUTDOWN_CLEAN_UP_MS = 5_000;

/**
 * The instance's open streams and sockets, by document. Delivers each document's committed events in id
 * order, exactly once per client: catch-up reads the outbox, live delivery is triggered by the bus after the
 * event's dispatch commits, and both pass through `offer`, which drops anything at or below the client's
 * `lastSeq`. Also enforces the connection limits, re-checks access on a timer and sends heartbeats.
 */
@Injectable()
export class RealtimeHub implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RealtimeHub.name);
  private readonly byDoc = new Map<string, Set<HubClient>>();
  private readonly docByEventKey = new Map<string, string>();
  private readonly perUser = new Map<string, number>();
  private readonly pumps = new Map<string, { again: boolean }>();
  private total = 0;
  /** Sockets open but not yet through their `auth` message (they count against REALTIME_MAX_CONNECTIONS too). */
  private unauthenticated = 0;
  private heartbeatTimer?: NodeJS.Timeout;
  private recheckTimer?: NodeJS.Timeout;
  private rechecking = false;
  /** Clean-ups of closed sessions still running (presence, locks, awareness and the notices about them). */
  private readonly cleanUps = new Set<Promise<void>>();

  constructor(
    private readonly bus: RealtimeBus,
    private readonly events: RealtimeEventRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly computedAccess: ComputedAccessService,
  ) {
    bus.subscribe((message) => {
      if (message.t === 'event') {
        const doc = this.docByEventKey.get(eventKey(message.org, message.ws, message.dt, message.di));
        if (doc) {
          this.pump(doc);
        }
      } else if (message.t === 'disconnect') {
        this.closeDocument(message.doc, 'DISCONNECTED_BY_MANAGER');
      } else if (message.t === 'presence') {
        this.pushToSockets(
          message.doc,
          'presence',
          { action: message.action, sessionId: message.sessionId, userId: message.userId },
          message.sessionId,
        );
      } else if (message.t === 'lock') {
        this.pushToSockets(message.doc, 'lock_changed', { action: message.action, lock: message.lock }, null);
      }
    });
    // Notifications sent while the listener was reconnecting are lost: re-read every open document.
    bus.onReconnect(() => [...this.byDoc.keys()].forEach((doc) => this.pump(doc)));
  }

  onApplicationBootstrap(): void {
    const { heartbeatMs, accessRecheckMs } = this.config.realtime;
    this.heartbeatTimer = setInterval(() => this.forEachClient((client) => client.heartbeat()), heartbeatMs);
    this.heartbeatTimer.unref();
    this.recheckTimer = setInterval(() => void this.recheckAll(), accessRecheckMs);
    this.recheckTimer.unref();
  }

  /**
   * Before the HTTP server closes: it would otherwise wait for every open event stream. Then waits (bounded) for
   * the closed sessions' clean-ups: the database pool closes right after, and a clean-up cut off there left the other
   * instances' sockets without the `left` and `released` notices (the rows were swept, the locks looked held).
   */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.heartbeatTimer);
    clearInterval(this.recheckTimer);
    this.forEachClient((client) => client.close('GOING_AWAY'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.cleanUps]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_CLEAN_UP_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Keeps a closed session's clean-up in view until it ends, so shutting down can wait for it. */
  track(cleanUp: Promise<void>): void {
    this.cleanUps.add(cleanUp);
    const done = (): void => {
      this.cleanUps.delete(cleanUp);
    };
    cleanUp.then(done, done);
  }

  clientsOf(documentUuid: string): HubClient[] {
    return [...(this.byDoc.get(documentUuid) ?? [])];
  }

  get connectionCount(): number {
    return this.total;
  }

  /**
   * A socket that has not authenticated yet takes a place under REALTIME_MAX_CONNECTIONS until its `auth` message
   * is answered or it closes (release, once): otherwise anyone, without a credential, could hold any number of
   * sockets open for REALTIME_AUTH_TIMEOUT_MS each, and open them again. False when the instance has no room.
   */
  admitUnauthenticated(): { release(): void } | null {
    if (this.total + this.unauthenticated >= this.config.realtime.maxConnections) {
      return null;
    }
    this.unauthenticated += 1;
    let released = false;
    return {
      release: () => {
        if (!released) {
          released = true;
          this.unauthenticated -= 1;
        }
      },
    };
  }

  /** Refuses with RATE_LIMIT_EXCEEDED when the user or the instance is at its connection limit. */
  assertCapacity(userId: string): void {
    const { maxConnections, maxConnectionsPerUser } = this.config.realtime;
    if (this.total >= maxConnections) {
      throw new AppException(ErrorCode.RATE_LIMIT_EXCEEDED, {
        details: [{ reason: 'this instance has no room for another realtime connection' }],
      });
    }
    if ((this.perUser.get(userId) ?? 0) >= maxConnectionsPerUser) {
      throw new AppException(ErrorCode.RATE_LIMIT_EXCEEDED, {
        details: [{ reason: `at most ${maxConnectionsPerUser} realtime connections per user` }],
      });
    }
  }

  /**
   * Registers a client (not yet live) and decides where its events start: after `lastEventId` when it resumes,
   * else after the document's newest event. An id beyond the newest event (none this stream sent, or one whose
   * events were purged) is read as the newest: taken as it is, every later event with a lower id — ids are the
   * shared outbox sequence — would be skipped. Returns whether events it missed have left the retention window.
   */
  async attach(client: HubClient, lastEventId: bigint | null): Promise<{ gap: boolean }> {
    this.assertCapacity(client.userId);
    const since = new Date(Date.now() - this.config.realtime.streamRetentionSeconds * 1000);
    const gap = lastEventId !== null && (await this.events.missedBefore(client.doc, lastEventId, since));
    const newest = await this.events.lastSeq(client.doc);
    client.lastSeq = lastEventId !== null && lastEventId < newest ? lastEventId : newest;
    this.assertCapacity(client.userId);
    let clients = this.byDoc.get(client.doc.uuid);
    if (!clients) {
      clients = new Set();
      this.byDoc.set(client.doc.uuid, clients);
      this.docByEventKey.set(eventKeyOf(client.doc), client.doc.uuid);
    }
    clients.add(client);
    this.total += 1;
    this.perUser.set(client.userId, (this.perUser.get(client.userId) ?? 0) + 1);
    return { gap };
  }

  /** Sends what the client missed (within the retention window when it resumes), then goes live. */
  async catchUp(client: HubClient, resuming: boolean): Promise<void> {
    const since = resuming ? new Date(Date.now() - this.config.realtime.streamRetentionSeconds * 1000) : null;
    for (;;) {
      const batch = await this.events.after(client.doc, client.lastSeq, since, PAGE);
      const shown = (await this.asSeenBy(client.doc, [client.userId], batch)).get(client.userId) ?? [];
      for (const event of shown) {
        this.deliver(client, event);
      }
      if (batch.length < PAGE || !this.isAttached(client)) {
        break;
      }
    }
    // Synchronous from here: nothing can be offered between the flush and going live.
    const pending = client.pending.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    client.pending = [];
    for (const event of pending) {
      this.deliver(client, event);
    }
    client.live = true;
  }

  detach(client: HubClient): void {
    const clients = this.byDoc.get(client.doc.uuid);
    if (!clients?.delete(client)) {
      return;
    }
    this.total -= 1;
    const count = (this.perUser.get(client.userId) ?? 1) - 1;
    if (count <= 0) {
      this.perUser.delete(client.userId);
    } else {
      this.perUser.set(client.userId, count);
    }
    if (clients.size === 0) {
      this.byDoc.delete(client.doc.uuid);
      this.docByEventKey.delete(eventKeyOf(client.doc));
    }
  }

  closeDocument(documentUuid: string, reason: CloseReason): number {
    const clients = this.clientsOf(documentUuid);
    clients.forEach((client) => client.close(reason));
    return clients.length;
  }

  private pushToSockets(
    documentUuid: string,
    kind: 'presence' | 'lock_changed',
    payload: Record<string, unknown>,
    exceptSession: string | null,
  ): void {
    for (const client of this.clientsOf(documentUuid)) {
      if (client.transport === 'ws' && client.sessionId !== exceptSession) {
        client.push(kind, payload);
      }
    }
  }

  private isAttached(client: HubClient): boolean {
    return this.byDoc.get(client.doc.uuid)?.has(client) ?? false;
  }

  private deliver(client: HubClient, event: StreamEvent): void {
    const seq = BigInt(event.id);
    if (seq <= client.lastSeq) {
      return;
    }
    client.lastSeq = seq;
    client.deliverEvent(event);
  }

  private offer(client: HubClient, event: StreamEvent): void {
    if (!client.live) {
      client.pending.push(event);
      return;
    }
    this.deliver(client, event);
  }

  /** Reads the document's new events once for all its clients here; passes per document never overlap. */
  private pump(documentUuid: string): void {
    const state = this.pumps.get(documentUuid);
    if (state) {
      state.again = true;
      return;
    }
    const run = { again: false };
    this.pumps.set(documentUuid, run);
    void (async () => {
      do {
        run.again = false;
        const clients = this.clientsOf(documentUuid);
        if (clients.length === 0) {
          break;
        }
        const from = clients.reduce(
          (min, client) => (client.lastSeq < min ? client.lastSeq : min),
          clients[0].lastSeq,
        );
        const batch = await this.events.after(clients[0].doc, from, null, PAGE);
        const views = await this.asSeenBy(
          clients[0].doc,
          this.clientsOf(documentUuid).map((client) => client.userId),
          batch,
        );
        batch.forEach((_event, index) => {
          for (const client of this.clientsOf(documentUuid)) {
            const view = views.get(client.userId);
            if (view) {
              this.offer(client, view[index]);
            } else {
              // Attached while the views were worked out: the next pass reads from its position.
              run.again = true;
            }
          }
        });
        run.again ||= batch.length === PAGE;
      } while (run.again);
    })()
      .catch((error: unknown) => this.logger.error({ err: error }, 'realtime event pump failed'))
      .finally(() => this.pumps.delete(documentUuid));
  }

  /**
   * The events as each user may see them: row values of lookups over documents the user cannot read are left out
   * (ComputedAccessService, docs/formulas.md "Access"). A batch without row values, and a user who may see them
   * all, get the events as read (one serialization shared by every stream).
   */
  private async asSeenBy(
    doc: DocRef,
    userIds: readonly string[],
    batch: StreamEvent[],
  ): Promise<Map<string, StreamEvent[]>> {
    const views = new Map<string, StreamEvent[]>();
    const carriesValues = batch.some((event) => Array.isArray(event.payload.values));
    for (const userId of new Set(userIds)) {
      const mask = carriesValues ? await this.computedAccess.eventMask(doc.uuid, userId) : null;
      views.set(userId, mask === null || mask.empty ? batch : batch.map((event) => mask.event(event)));
    }
    return views;
  }

  private forEachClient(action: (client: HubClient) => void): void {
    for (const clients of [...this.byDoc.values()]) {
      for (const client of [...clients]) {
        try {
          action(client);
        } catch (error) {
          this.logger.warn({ err: error }, 'realtime client action failed');
        }
      }
    }
  }

  /** One check per credential and document, however many connections share it. */
  private async recheckAll(): Promise<void> {
    if (this.rechecking) {
      return;
    }
    this.rechecking = true;
    try {
      const groups = new Map<string, HubClient[]>();
      this.forEachClient((client) =>
        groups.set(client.accessKey, [...(groups.get(client.accessKey) ?? []), client]),
      );
      for (const clients of groups.values()) {
        // recheck() answers false when access is gone; a failure to check (database down) keeps the clients.
        const allowed = await clients[0].recheck().catch((error: unknown) => {
          this.logger.warn({ err: error }, 'realtime access re-check failed');
          return true;
        });
        if (!allowed) {
          clients.forEach((client) => client.close('ACCESS_LOST'));
        }
      }
    } finally {
      this.rechecking = false;
    }
  }
}
