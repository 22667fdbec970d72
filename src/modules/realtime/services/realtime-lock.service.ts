import { Inject, Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { ChangeDraft, DocumentRecord } from '../../documents/domain/document.records.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import { type LockTarget, type LockTargetType, locksCollide } from '../domain/lock-targets.js';
import type { DocRef } from '../domain/realtime.types.js';
import { lockCoversWrite, writeTargetsOf } from '../domain/write-targets.js';
import { type LockRecord, LockRepository } from '../repositories/lock.repository.js';
import { docRefOf, RealtimeAuthService } from './realtime-auth.service.js';
import { RealtimeBus } from './realtime-bus.service.js';

export interface LockView {
  lockId: string;
  target: { type: LockTargetType; rowId?: string; fieldId?: string };
  exclusive: boolean;
  userId: string;
  sessionId: string | null;
  expiresAt: string;
  createdAt: string;
}

export function lockView(lock: LockRecord): LockView {
  return {
    lockId: lock.id,
    target: {
      type: lock.target.type,
      ...(lock.target.rowId !== null ? { rowId: lock.target.rowId } : {}),
      ...(lock.target.fieldId !== null ? { fieldId: lock.target.fieldId } : {}),
    },
    exclusive: lock.exclusive,
    userId: lock.userId,
    sessionId: lock.sessionId,
    expiresAt: new Date(lock.expiresAt).toISOString(),
    createdAt: new Date(lock.createdAt).toISOString(),
  };
}

/** 409 RESOURCE_LOCKED naming the lock in the way (its holder, target and expiry). */
export function lockedBy(lock: LockRecord): AppException {
  return new AppException(ErrorCode.RESOURCE_LOCKED, {
    details: [{ reason: `locked by ${lock.userId} until ${new Date(lock.expiresAt).toISOString()}` }],
    payload: { lock: lockView(lock) },
  });
}

/**
 * Locks on a document's rows, cells, fields or the whole document. Decisions on one document are serialized
 * across instances by an advisory lock. A user's own locks never stand in their way; an exclusive lock of
 * someone else refuses both overlapping locks and writes; a shared lock refuses only overlapping exclusive
 * locks. Either refuses only while its holder may still write the document (`stands`). Locks expire at their TTL
 * and die with the socket session that took them.
 */
@Injectable()
export class RealtimeLockService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly locks: LockRepository,
    private readonly bus: RealtimeBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly auth: RealtimeAuthService,
  ) {}

  /** A lock for the caller of `ctx` (opened with `write`) on its document. */
  async acquire(
    ctx: DocumentContext,
    input: { target: LockTarget; ttlSeconds?: number; exclusive?: boolean; sessionId: string | null },
  ): Promise<LockView> {
    const { lockDefaultTtlSeconds, lockMaxTtlSeconds } = this.config.realtime;
    const ttlSeconds = input.ttlSeconds ?? lockDefaultTtlSeconds;
    if (ttlSeconds > lockMaxTtlSeconds) {
      throw AppException.validation([
        { field: 'ttlSeconds', reason: `ttlSeconds must not be greater than ${lockMaxTtlSeconds}` },
      ]);
    }
    const doc = docRefOf(ctx);
    const userId = ctx.principal.userId;
    const wanted = { target: input.target, exclusive: input.exclusive ?? true };
    const lock = await this.tx.run(async () => {
      await this.locks.lockDocument(doc.uuid);
      for (const other of await this.locks.live(doc.organizationId, doc.uuid)) {
        if (
          other.userId !== userId &&
          locksCollide(other, wanted) &&
          (await this.stands(ctx.document, other))
        ) {
          throw lockedBy(other);
        }
      }
      const created = await this.locks.insert(doc, {
        ...wanted,
        userId,
        sessionId: input.sessionId,
        ttlSeconds,
      });
      await this.bus.publish({
        t: 'lock',
        doc: doc.uuid,
        action: 'acquired',
        lock: { ...lockView(created) },
      });
      return created;
    });
    return lockView(lock);
  }

  /** The holder releases its lock; a document manager may release anyone's. Unknown or expired → NOT_FOUND. */
  async release(doc: DocRef, lockId: string, userId: string, canManage: boolean): Promise<void> {
    await this.tx.run(async () => {
      const lock = await this.locks.find(doc, lockId);
      if (!lock) {
        throw AppException.notFound('lock');
      }
      if (lock.userId !== userId && !canManage) {
        throw AppException.forbidden('only the holder or a document manager may release this lock');
      }
      // Conditional on the lock still being there: of two releases at once, the one that finds it deleted by the
      // other answers NOT_FOUND, as a release after it would, and announces nothing a second time.
      if (!(await this.locks.delete(doc, lockId))) {
        throw AppException.notFound('lock');
      }
      await this.bus.publish({ t: 'lock', doc: doc.uuid, action: 'released', lock: { ...lockView(lock) } });
    });
  }

  /**
   * The locks that stand: a lock whose holder may no longer write the document is deleted (and its release
   * announced) here as a write in its way would delete it, so the list never shows a lock that would not block.
   * One rights lookup per holder, not per lock.
   */
  async list(document: DocumentRecord): Promise<LockView[]> {
    const live = await this.locks.live(document.organizationId, document.uuid);
    if (live.length === 0) {
      return [];
    }
    return this.tx.run(async () => {
      const mayWrite = new Map<string, boolean>();
      const standing: LockRecord[] = [];
      for (const lock of live) {
        if (!mayWrite.has(lock.userId)) {
          mayWrite.set(lock.userId, await this.auth.mayWrite(document, lock.userId));
        }
        if (mayWrite.get(lock.userId)) {
          standing.push(lock);
        } else {
          await this.drop(document, lock);
        }
      }
      return standing.map(lockView);
    });
  }

  /** A session ended: its locks go with it. */
  async releaseSession(doc: DocRef, sessionId: string): Promise<void> {
    await this.tx.run(async () => {
      const released = await this.locks.deleteOfSession(doc, sessionId);
      for (const lock of released) {
        await this.bus.publish({ t: 'lock', doc: doc.uuid, action: 'released', lock: { ...lockView(lock) } });
      }
    });
  }

  /**
   * The documents module's write guard (registered on ChangeEngineService): a change by `userId` to a target
   * covered by someone else's exclusive lock is refused with RESOURCE_LOCKED naming that lock. Runs inside the
   * write's transaction, after the document row is locked.
   */
  async assertWritable(document: DocumentRecord, drafts: ChangeDraft[], userId: string): Promise<void> {
    const held = (await this.locks.live(document.organizationId, document.uuid)).filter(
      (lock) => lock.exclusive && lock.userId !== userId,
    );
    if (held.length === 0) {
      return;
    }
    const targets = writeTargetsOf(document, drafts);
    for (const lock of held) {
      if (
        targets.some((target) => lockCoversWrite(lock.target, target)) &&
        (await this.stands(document, lock))
      ) {
        throw lockedBy(lock);
      }
    }
  }

  /**
   * Whether a lock that would refuse something still counts: only while its holder may write the document
   * (docs/realtime.md, "Locks"). A lock taken over HTTP is never re-checked otherwise, and would keep the owners
   * out until it expires after its holder was removed, demoted or suspended, or `permissions.edit` left them out.
   * Such a lock is deleted here (with the caller's transaction) and its release announced. Asked only of locks in
   * someone's way, once per lock and transaction, so writes that meet no lock pay nothing for it.
   */
  private stands(document: DocumentRecord, lock: LockRecord): Promise<boolean> {
    return this.tx.memo(this, `stands:${lock.id}`, async () => {
      if (await this.auth.mayWrite(document, lock.userId)) {
        return true;
      }
      await this.drop(document, lock);
      return false;
    });
  }

  /** Deletes a lock whose holder lost write access, with the caller's transaction, and announces its release. */
  private async drop(document: DocumentRecord, lock: LockRecord): Promise<void> {
    if (!(await this.locks.delete(document, lock.id))) {
      return; // released meanwhile; its release was announced by whoever deleted it
    }
    await this.bus.publish({
      t: 'lock',
      doc: document.uuid,
      action: 'released',
      lock: { ...lockView(lock) },
    });
  }
}
