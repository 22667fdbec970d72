import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import type { DocRef } from '../domain/realtime.types.js';
import type { AwarenessEntry } from '../domain/yjs-wire.js';
import { PresenceService } from './presence.service.js';
import type { RealtimeSession } from './realtime-session.js';
import { YjsStateService } from './yjs-state.service.js';

/** HTTP awareness clients are identified by user, document and Yjs client id (no socket to name them). */
function httpSessionId(userId: string, documentUuid: string, clientId: number): string {
  const hex = createHash('sha256').update(`${userId}|${documentUuid}|${clientId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function clientIdsOf(entries: AwarenessEntry[]): number[] {
  return [...new Set(entries.map((entry) => entry.clientId))];
}

/**
 * Awareness updates, who may send them, and their relay (docs/realtime.md, "Awareness ownership"). A y-protocols
 * update can carry entries for any client id, and a newer clock or a `null` state replaces or removes that client
 * everywhere; so a session speaks only for its own client: a socket for the first client id it announced that no
 * other user's live session speaks for, an HTTP awareness client for the one id that names it.
 */
@Injectable()
export class AwarenessService {
  constructor(
    private readonly presence: PresenceService,
    private readonly yjs: YjsStateService,
  ) {}

  /**
   * An update from a socket. JSON messages (`refuse`) naming any client but the session's are refused whole with
   * VALIDATION_ERROR on `field`. Binary frames (`drop`) lose the other clients' entries: stock providers
   * (y-websocket) re-send every awareness change they receive, others' included, and cannot read an error reply;
   * until the socket has a client, the first entry with a state whose id nobody else holds becomes its client.
   */
  async fromSocket(
    session: RealtimeSession,
    update: Uint8Array,
    mode: 'refuse' | 'drop',
    field: string,
  ): Promise<void> {
    const entries = this.yjs.readAwareness(update, field);
    const own = session.awarenessClientId ?? (await this.claim(session, entries, mode, field));
    const others = clientIdsOf(entries).filter((id) => id !== own);
    if (mode === 'refuse' && others.length > 0) {
      throw AppException.validation([
        {
          field,
          reason: `this session's awareness client is ${own}; an update may not speak for ${others.join(', ')}`,
        },
      ]);
    }
    session.awarenessClientId = own;
    const mine = entries.filter((entry) => entry.clientId === own);
    await this.yjs.applyAwareness(session.doc, mine, session.sessionId, field);
    mine.forEach((entry) => session.awarenessClocks.set(entry.clientId, entry.clock));
  }

  /** A socket closed: the others learn that its client left. */
  async leave(session: RealtimeSession): Promise<void> {
    const removal = [...session.awarenessClocks].map(([clientId, clock]) => ({
      clientId,
      clock: clock + 1,
      state: null,
    }));
    await this.yjs.applyAwareness(session.doc, removal, session.sessionId, 'frame');
  }

  /**
   * An update over HTTP (`POST .../awareness`): the awareness of one client of the caller, kept as presence for a
   * few heartbeats (no socket keeps it alive); a null state leaves. VALIDATION_ERROR on `update` when it names
   * several clients, or one another user's session speaks for.
   */
  async fromHttp(doc: DocRef, userId: string, update: Uint8Array): Promise<void> {
    const entries = this.yjs.readAwareness(update, 'update');
    const ids = clientIdsOf(entries);
    if (ids.length !== 1) {
      throw AppException.validation([
        {
          field: 'update',
          reason:
            ids.length === 0
              ? 'update must carry the awareness of one client'
              : `an awareness update speaks for one client only; it names ${ids.join(', ')}`,
        },
      ]);
    }
    const [clientId] = ids;
    const sessionId = httpSessionId(userId, doc.uuid, clientId);
    if ((await this.presence.clientHolder(doc, clientId, userId, sessionId)) === 'other-user') {
      throw AppException.validation([
        { field: 'update', reason: `awareness client ${clientId} belongs to another user's session` },
      ]);
    }
    const leaving = entries.every((entry) => entry.state === null);
    if (!leaving) {
      await this.presence.join(doc, sessionId, userId, 'http');
    }
    await this.yjs.applyAwareness(doc, entries, sessionId, 'update');
    if (leaving) {
      await this.presence.leave(doc, sessionId, userId);
    }
  }

  /**
   * The client a socket without one speaks for from now on: the first candidate no other live session holds,
   * else one only the same user's other sessions hold (a reconnecting Yjs client keeps its client id while its
   * old socket lingers until the heartbeat ends it). Null when a binary frame offers none.
   */
  private async claim(
    session: RealtimeSession,
    entries: AwarenessEntry[],
    mode: 'refuse' | 'drop',
    field: string,
  ): Promise<number | null> {
    if (entries.length === 0) {
      return null;
    }
    const candidates =
      mode === 'refuse'
        ? [entries[0].clientId]
        : clientIdsOf(entries.filter((entry) => entry.state !== null));
    let fallback: number | null = null;
    for (const clientId of candidates) {
      const holder = await this.presence.clientHolder(
        session.doc,
        clientId,
        session.userId,
        session.sessionId,
      );
      if (holder === 'free') {
        return clientId;
      }
      if (holder === 'same-user') {
        fallback ??= clientId;
      }
    }
    if (fallback === null && mode === 'refuse') {
      throw AppException.validation([
        { field, reason: `awareness client ${entries[0].clientId} belongs to another user's session` },
      ]);
    }
    return fallback;
  }
}
