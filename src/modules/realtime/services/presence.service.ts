import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import type { DocRef } from '../domain/realtime.types.js';
import type { AwarenessEntry } from '../domain/yjs-wire.js';
import { type PresenceRecord, PresenceRepository } from '../repositories/presence.repository.js';
import { RealtimeBus } from './realtime-bus.service.js';

export interface OnlineUser {
  userId: string;
  sessions: Array<{
    sessionId: string;
    transport: string;
    clientId: number | null;
    state: Record<string, unknown> | null;
    connectedAt: string;
    lastSeenAt: string;
  }>;
}

/** Floor of a presence row's life (see ttlMs). */
export const PRESENCE_MIN_TTL_MS = 5000;

/**
 * Who is online on a document, across instances: one `realtime_presence` row per stream or socket (and per
 * HTTP awareness client), refreshed by its instance every heartbeat and expiring after three missed ones.
 */
@Injectable()
export class PresenceService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PresenceService.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly presence: PresenceRepository,
    private readonly bus: RealtimeBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Three missed heartbeats, and never under PRESENCE_MIN_TTL_MS: with short heartbeats, one stalled event loop
   * would otherwise let another instance sweep this instance's live sessions and the locks they hold.
   */
  get ttlMs(): number {
    return Math.max(this.config.realtime.heartbeatMs * 3, PRESENCE_MIN_TTL_MS);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), this.config.realtime.heartbeatMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.presence.removeInstance(this.bus.instanceId).catch(() => undefined);
  }

  async join(
    doc: DocRef,
    sessionId: string,
    userId: string,
    transport: 'ws' | 'http',
    ttlMs = this.ttlMs,
  ): Promise<void> {
    // HTTP awareness has no connection to keep it alive: it is not refreshed by the instance and simply expires.
    const instanceId = transport === 'http' ? 'http' : this.bus.instanceId;
    await this.presence.join(doc, { sessionId, userId, instanceId, transport, ttlMs });
    await this.bus.publish({ t: 'presence', doc: doc.uuid, action: 'joined', sessionId, userId });
  }

  async leave(doc: DocRef, sessionId: string, userId: string): Promise<void> {
    await this.presence.leave(doc, sessionId);
    await this.bus.publish({ t: 'presence', doc: doc.uuid, action: 'left', sessionId, userId });
  }

  /** Removes the session's row, if any, without a notice: for a session that was never announced as joined. */
  async forget(doc: DocRef, sessionId: string): Promise<void> {
    await this.presence.leave(doc, sessionId);
  }

  /** Keeps the session's own awareness entry for GET .../users. */
  async awareness(doc: DocRef, sessionId: string, own: AwarenessEntry): Promise<void> {
    await this.presence.setAwareness(doc, sessionId, own.clientId, own.clock, own.state);
  }

  /**
   * Who else speaks for awareness client `clientId` on the document: `free` (no other live session), `same-user`
   * (only other sessions of `userId`, such as the socket a reconnecting client left behind) or `other-user`.
   */
  async clientHolder(
    doc: DocRef,
    clientId: number,
    userId: string,
    sessionId: string,
  ): Promise<'free' | 'same-user' | 'other-user'> {
    const holders = await this.presence.holdersOf(doc, clientId, sessionId);
    if (holders.length === 0) {
      return 'free';
    }
    return holders.every((holder) => holder === userId) ? 'same-user' : 'other-user';
  }

  async records(doc: DocRef): Promise<PresenceRecord[]> {
    return this.presence.list(doc);
  }

  async users(doc: DocRef): Promise<OnlineUser[]> {
    const byUser = new Map<string, OnlineUser>();
    for (const row of await this.presence.list(doc)) {
      const user = byUser.get(row.userId) ?? { userId: row.userId, sessions: [] };
      user.sessions.push({
        sessionId: row.sessionId,
        transport: row.transport,
        clientId: row.awarenessClientId,
        state: row.state,
        connectedAt: new Date(row.connectedAt).toISOString(),
        lastSeenAt: new Date(row.lastSeenAt).toISOString(),
      });
      byUser.set(row.userId, user);
    }
    return [...byUser.values()];
  }

  private async tick(): Promise<void> {
    try {
      await this.presence.refreshInstance(this.bus.instanceId, this.ttlMs);
      await this.presence.sweep();
    } catch (error) {
      this.logger.warn({ err: error }, 'presence refresh failed');
    }
  }
}
