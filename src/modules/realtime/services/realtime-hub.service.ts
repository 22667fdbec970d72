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
import {
  comparePositions,
  earliestPosition,
  type EventPosition,
  type PositionedEvent,
} from '../domain/event-position.js';
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
 * While committed events wait for an older transaction, the instance reads the watermark alone (one statement for all
 * its held documents) this long after a document starts waiting, doubling to the cap, and at most this often.
 */
const HELD_BACK_POLL_MS = 10;
const HELD_BACK_POLL_MAX_MS = 250;

/**
 * The instance's open streams and sockets, by document. Delivers each document's final events (their transaction
 * and every older one ended) in position order (domain/event-position.ts), exactly once per client: catch-up reads
 * the outbox, live delivery is triggered by the bus after the event's dispatch commits (and, while committed events
 * wait for an older transaction, by the watermark poll once it ends), and both pass through `offer`, which drops
 * anything at or before the client's `position`. Also enforces the connection limits, re-checks access on a timer and
 * sends heartbeats.
 */
@Injectable()
export class RealtimeHub implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RealtimeHub.name);
  private readonly byDoc = new Map<string, Set<HubClient>>();
  private readonly docByEventKey = new Map<string, string>();
  private readonly perUser = new Map<string, number>();
  private readonly pumps = new Map<string, { again: boolean }>();
  /**
   * Documents whose committed events wait for an older transaction, with the transaction of the first of them: they
   * are read again once the watermark is above it (pollWatermark), not before — until then a read finds nothing new
   * but events committed since, and those come with notices of their own.
   */
  private readonly heldBack = new Map<string, bigint>();
  /** The shared watermark poll: its timer and when it fires, the next delay, the last read's start, one in flight. */
  private pollTimer?: NodeJS.Timeout;
  private pollDueAt = 0;
  private pollDelayMs = HELD_BACK_POLL_MS;
  private lastPollAt = Number.NEGATIVE_INFINITY;
  private polling = false;
  private pollAgain = false;
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
        // Events held back wait for older transactions, which are mostly writers whose own events this announces: one
        // watermark read tells which held documents it may have released, and only those are read again.
        if (this.heldBack.size > 0) {
          this.schedulePoll(0);
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
    clearTimeout(this.pollTimer);
    this.heldBack.clear();
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
   * Registers a client (not yet live) and decides where its events start: after the event `lastEventId` when it
   * resumes, else after the document's newest final event (RealtimeEventRepository.positionAt). An id that is not
   * one of the document's events (none this stream sent, or one whose events were purged) stands for the latest
   * position numbered up to it, so an id beyond the newest event is read as the newest: taken as it is, every later
   * event with a lower id — ids are the shared outbox sequence — would be skipped. Returns whether events it missed
   * have left the retention window.
   */
  async attach(client: HubClient, lastEventId: bigint | null): Promise<{ gap: boolean }> {
    this.assertCapacity(client.userId);
    const since = new Date(Date.now() - this.config.realtime.streamRetentionSeconds * 1000);
    client.position = await this.events.positionAt(client.doc, lastEventId);
    if (lastEventId === null) {
      // Events committed before the client came that still wait for an older transaction are not its to receive.
      client.skip = new Set(await this.events.committedAfter(client.doc, client.position, PAGE));
    }
    const gap = lastEventId !== null && (await this.events.missedBefore(client.doc, client.position, since));
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
    const since = resuming ? this.retentionStart() : null;
    for (;;) {
      const { events: batch, heldBack } = await this.events.after(client.doc, client.position, since, PAGE);
      const shown = (await this.asSeenBy(client.doc, [client.userId], batch)).get(client.userId) ?? [];
      shown.forEach((event, index) => this.deliver(client, event, batch[index].position));
      if (heldBack !== null) {
        // Committed events wait for an older transaction: the document's pump delivers them once it has ended. The
        // earlier wait stands if the document already has one (this read starts at this client's position).
        const known = this.heldBack.get(client.doc.uuid);
        this.hold(client.doc.uuid, known !== undefined && known < heldBack ? known : heldBack);
      }
      if (batch.length < PAGE || !this.isAttached(client)) {
        break;
      }
    }
    // Synchronous from here: nothing can be offered between the flush and going live.
    const pending = client.pending.sort((a, b) => comparePositions(a.position, b.position));
    client.pending = [];
    for (const each of pending) {
      this.deliver(client, each.event, each.position);
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
      // Only while the key still names this document: a document created since with the deleted one's id (its
      // coordinates) has taken the key over, and its streams must keep receiving.
      const key = eventKeyOf(client.doc);
      if (this.docByEventKey.get(key) === client.doc.uuid) {
        this.docByEventKey.delete(key);
      }
      this.heldBack.delete(client.doc.uuid);
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

  /** Events that occurred before this have left the retention window (REALTIME_STREAM_RETENTION_SECONDS). */
  private retentionStart(): Date {
    return new Date(Date.now() - this.config.realtime.streamRetentionSeconds * 1000);
  }

  private isAttached(client: HubClient): boolean {
    return this.byDoc.get(client.doc.uuid)?.has(client) ?? false;
  }

  private deliver(client: HubClient, event: StreamEvent, position: EventPosition): void {
    if (comparePositions(position, client.position) <= 0) {
      return;
    }
    client.position = position;
    if (client.skip.size > 0 && client.skip.delete(event.id)) {
      return;
    }
    client.deliverEvent(event);
  }

  private offer(client: HubClient, event: StreamEvent, position: EventPosition): void {
    if (!client.live) {
      client.pending.push({ event, position });
      return;
    }
    this.deliver(client, event, position);
  }

  /**
   * The document's committed events wait for an older transaction; the first of them was written by `tx`. A new wait
   * brings the watermark poll back to its shortest delay (a long transaction that records no event of this document
   * ends without a notice for it, so the poll is what notices).
   */
  private hold(documentUuid: string, tx: bigint): void {
    if (!this.byDoc.has(documentUuid)) {
      return;
    }
    const known = this.heldBack.get(documentUuid);
    this.heldBack.set(documentUuid, tx);
    if (known !== tx) {
      this.pollDelayMs = HELD_BACK_POLL_MS;
      this.schedulePoll(HELD_BACK_POLL_MS);
    }
  }

  /** Polls the watermark after `delayMs`, or sooner if already due; never twice within HELD_BACK_POLL_MS. */
  private schedulePoll(delayMs: number): void {
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    const dueAt = Math.max(Date.now() + delayMs, this.lastPollAt + HELD_BACK_POLL_MS);
    if (this.pollTimer && this.pollDueAt <= dueAt) {
      return;
    }
    clearTimeout(this.pollTimer);
    this.pollDueAt = dueAt;
    this.pollTimer = setTimeout(
      () => {
        this.pollTimer = undefined;
        void this.pollWatermark();
      },
      Math.max(dueAt - Date.now(), 0),
    );
    this.pollTimer.unref();
  }

  /**
   * One watermark read for every held document of the instance; those whose wait it ends are read again (their pump
   * records the next wait, or clears it). Backs off to HELD_BACK_POLL_MAX_MS while nothing new is held; stops when no
   * document is.
   */
  private async pollWatermark(): Promise<void> {
    if (this.heldBack.size === 0) {
      return;
    }
    this.polling = true;
    this.pollAgain = false;
    this.lastPollAt = Date.now();
    try {
      const watermark = BigInt(await this.events.watermark());
      for (const [documentUuid, tx] of this.heldBack) {
        if (tx < watermark) {
          this.pump(documentUuid);
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'realtime watermark poll failed');
    } finally {
      this.polling = false;
    }
    if (this.heldBack.size > 0) {
      const delayMs = this.pollAgain ? 0 : this.pollDelayMs;
      this.pollDelayMs = Math.min(this.pollDelayMs * 2, HELD_BACK_POLL_MAX_MS);
      this.schedulePoll(delayMs);
    }
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
          this.heldBack.delete(documentUuid);
          break;
        }
        const from = earliestPosition(clients.map((client) => client.position));
        // The retention window applies here too: events held back during a client's catch-up come this way.
        const { events: batch, heldBack } = await this.events.after(clients[0].doc, from, this.retentionStart(), PAGE);
        const views = await this.asSeenBy(
          clients[0].doc,
          this.clientsOf(documentUuid).map((client) => client.userId),
          batch,
        );
        batch.forEach(({ position }, index) => {
          for (const client of this.clientsOf(documentUuid)) {
            const view = views.get(client.userId);
            if (view) {
              this.offer(client, view[index], position);
            } else {
              // Attached while the views were worked out: the next pass reads from its position.
              run.again = true;
            }
          }
        });
        if (heldBack !== null) {
          this.hold(documentUuid, heldBack);
        } else if (batch.length < PAGE) {
          this.heldBack.delete(documentUuid);
        }
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
    batch: readonly PositionedEvent[],
  ): Promise<Map<string, StreamEvent[]>> {
    const views = new Map<string, StreamEvent[]>();
    const events = batch.map((each) => each.event);
    const carriesValues = events.some((event) => Array.isArray(event.payload.values));
    for (const userId of new Set(userIds)) {
      const mask = carriesValues ? await this.computedAccess.eventMask(doc.uuid, userId) : null;
      views.set(userId, mask === null || mask.empty ? events : events.map((event) => mask.event(event)));
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
