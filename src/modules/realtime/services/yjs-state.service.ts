import { Inject, Injectable, Logger } from '@nestjs/common';
import * as Y from 'yjs';
import { AppException } from '../../../common/errors/app.exception.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocRef } from '../domain/realtime.types.js';
import {
  assertYjsUpdate,
  type AwarenessEntry,
  decodeAwareness,
  encodeAwareness,
  toBase64,
} from '../domain/yjs-wire.js';
import { type SnapshotRecord, YjsStateRepository } from '../repositories/yjs-state.repository.js';
import { BUS_MAX_BYTES, RealtimeBus } from './realtime-bus.service.js';
import { PresenceService } from './presence.service.js';
import { RealtimeHub } from './realtime-hub.service.js';

/** Updates up to this size travel inside the bus message; larger ones are read from the table by id. */
const INLINE_UPDATE_BYTES = 4096;

const EMPTY_STATE = Y.encodeStateAsUpdate(new Y.Doc());

/**
 * The shared Yjs state of each document, kept in PostgreSQL rather than in any instance's memory: the state is
 * the merge of the compacted state and the updates after it, so every instance answers alike and a restart
 * loses nothing. Updates and awareness are relayed to the document's sockets here and, through the bus, on
 * every other instance. This is collaboration state only; rows change through requests and merges.
 */
@Injectable()
export class YjsStateService {
  private readonly logger = new Logger(YjsStateService.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly repo: YjsStateRepository,
    private readonly bus: RealtimeBus,
    private readonly hub: RealtimeHub,
    private readonly presence: PresenceService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    bus.subscribe((message, local) => {
      if (local) {
        return;
      }
      if (message.t === 'yjs') {
        void this.relayRemoteUpdate(message.doc, message.id, message.u).catch((error: unknown) =>
          this.logger.warn({ err: error }, 'relaying a Yjs update failed'),
        );
      } else if (message.t === 'awareness') {
        this.fanOut(message.doc, null, 'awareness', message.u);
      }
    });
  }

  /** Validates, stores and relays a Yjs update; compacts the document's updates past the threshold. */
  async applyUpdate(
    doc: DocRef,
    update: Uint8Array,
    userId: string,
    fromSessionId: string | null,
  ): Promise<{ stateVector: string }> {
    try {
      assertYjsUpdate(update);
    } catch {
      throw AppException.validation([{ field: 'update', reason: 'update is not a valid Yjs update' }]);
    }
    const id = await this.repo.appendUpdate(doc, update, userId);
    const encoded = toBase64(update);
    this.fanOut(doc.uuid, fromSessionId, 'yjs_update', encoded);
    await this.bus.publish({
      t: 'yjs',
      doc: doc.uuid,
      from: fromSessionId ?? '',
      id,
      ...(update.length <= INLINE_UPDATE_BYTES ? { u: encoded } : {}),
    });
    if ((await this.repo.pendingCount(doc)) >= this.config.realtime.yjsCompactAfterUpdates) {
      await this.compact(doc);
    }
    return { stateVector: toBase64(Y.encodeStateVectorFromUpdate(await this.state(doc))) };
  }

  /** Reads a y-protocols awareness update; VALIDATION_ERROR on `field` when it is not one. */
  readAwareness(update: Uint8Array, field: string): AwarenessEntry[] {
    try {
      return decodeAwareness(update);
    } catch {
      throw AppException.validation([{ field, reason: 'update is not a valid awareness update' }]);
    }
  }

  /**
   * Records the session's own entry (for GET .../users) and relays the entries — all of them the session's own
   * client, which the caller checked — to the document's other sockets here and on every other instance.
   */
  async applyAwareness(
    doc: DocRef,
    entries: AwarenessEntry[],
    sessionId: string,
    field: string,
  ): Promise<void> {
    const latest = entries.reduce<AwarenessEntry | undefined>(
      (newest, entry) => (newest === undefined || entry.clock >= newest.clock ? entry : newest),
      undefined,
    );
    if (!latest) {
      return;
    }
    const encoded = toBase64(encodeAwareness(entries));
    if (encoded.length > BUS_MAX_BYTES - 400) {
      throw AppException.validation([{ field, reason: 'awareness update too large' }]);
    }
    await this.presence.awareness(doc, sessionId, latest);
    this.fanOut(doc.uuid, sessionId, 'awareness', encoded);
    await this.bus.publish({ t: 'awareness', doc: doc.uuid, from: sessionId, u: encoded });
  }

  /** The document's whole state as one Yjs update. */
  async state(doc: DocRef): Promise<Uint8Array> {
    const { state, updates } = await this.repo.load(doc);
    const parts = [...(state ? [state] : []), ...updates.map((row) => row.update)];
    if (parts.length === 0) {
      return EMPTY_STATE;
    }
    return parts.length === 1 ? parts[0] : Y.mergeUpdates(parts);
  }

  /** What a client with `stateVector` lacks (everything without one), and the server's state vector. */
  async diff(
    doc: DocRef,
    stateVector?: Uint8Array,
  ): Promise<{ update: Uint8Array; stateVector: Uint8Array }> {
    const state = await this.state(doc);
    let update: Uint8Array;
    try {
      update = stateVector ? Y.diffUpdate(state, stateVector) : state;
    } catch {
      throw AppException.validation([
        { field: 'stateVector', reason: 'stateVector is not a valid Yjs state vector' },
      ]);
    }
    return { update, stateVector: Y.encodeStateVectorFromUpdate(state) };
  }

  async createSnapshot(doc: DocRef, name: string, userId: string): Promise<SnapshotRecord> {
    return this.repo.createSnapshot(doc, name, await this.state(doc), userId);
  }

  async findSnapshot(doc: DocRef, by: { id?: string; name?: string }): Promise<SnapshotRecord | null> {
    return this.repo.findSnapshot(doc, by);
  }

  async listSnapshots(
    doc: DocRef,
    offset: number,
    limit: number,
  ): Promise<{ items: SnapshotRecord[]; total: number }> {
    return this.repo.listSnapshots(doc, offset, limit);
  }

  /** Folds the pending updates into the compacted state; one instance at a time per document. */
  async compact(doc: DocRef): Promise<void> {
    await this.tx.run(async () => {
      await this.repo.lockDocument(doc);
      const { state, updates } = await this.repo.load(doc);
      if (updates.length < this.config.realtime.yjsCompactAfterUpdates) {
        return;
      }
      const merged = Y.mergeUpdates([...(state ? [state] : []), ...updates.map((row) => row.update)]);
      await this.repo.saveCompacted(doc, merged, updates[updates.length - 1].id);
    });
  }

  private async relayRemoteUpdate(
    documentUuid: string,
    id: string,
    inline: string | undefined,
  ): Promise<void> {
    const clients = this.hub.clientsOf(documentUuid).filter((client) => client.transport === 'ws');
    if (clients.length === 0) {
      return;
    }
    const update = inline ?? (await this.loadUpdate(clients[0].doc, id));
    this.fanOut(documentUuid, null, 'yjs_update', update);
  }

  private async loadUpdate(doc: DocRef, id: string): Promise<string> {
    const update = await this.repo.updateById(doc, id);
    // Already compacted away (the instance that stored it may compact right after publishing): send the whole
    // state instead. Applying an update is idempotent in Yjs, and clients of stock providers sync only when they
    // connect, so leaving the update out would keep them behind until they reconnect.
    return toBase64(update ?? (await this.state(doc)));
  }

  private fanOut(
    documentUuid: string,
    exceptSession: string | null,
    kind: 'yjs_update' | 'awareness',
    update: string,
  ): void {
    for (const client of this.hub.clientsOf(documentUuid)) {
      if (client.transport === 'ws' && client.sessionId !== exceptSession) {
        client.push(kind, { update });
      }
    }
  }
}
