import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import type {
  Admission,
  BindingStatus,
  ConnectionRecord,
  ShareLinkRecord,
} from '../domain/supply-chain.types.js';
import { BindingRepository } from '../repositories/binding.repository.js';
import { ConnectionRepository } from '../repositories/connection.repository.js';
import { isUuid } from '../repositories/sql.js';
import { notFound } from './supply-chain-access.service.js';

export function hashShareCode(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

export function isoOrNull(date: Date | null): string | null {
  return date ? new Date(date).toISOString() : null;
}

/** How a buyer organization is let in, or null when it is not (docs/supply-chain.md, "Bindings"). */
export interface BindingAdmission {
  status: BindingStatus;
  admittedVia: Admission;
  shareLinkId: string | null;
}

/**
 * Approval mode without an organization list: any organization may ask, and the supplier approves or rejects each
 * binding (spec 3: a buyer's binding "starts pending and waits for optional supplier approval"). This is the default
 * of a connection created without `accessControl`, so the spec's flow (connection, order book, binding by
 * `connectionId`, approval) works without a share code; nothing flows before the supplier approves. A list narrows
 * who may ask.
 */
function openToAsk(connection: ConnectionRecord): boolean {
  return (
    connection.accessControl.mode === 'approval' && connection.accessControl.allowedOrganizations.length === 0
  );
}

/**
 * What a buyer organization may see and use of another organization's connection: its access mode, its whitelist,
 * its live bindings, and the share links that let an organization outside the list ask. Everything it may not see
 * is NOT_FOUND, exactly like an id that does not exist.
 */
@Injectable()
export class ConnectionAdmissionService {
  constructor(
    private readonly connections: ConnectionRepository,
    private readonly bindings: BindingRepository,
  ) {}

  /**
   * Whether a buyer organization may see the connection: public, open to ask (approval mode without a list), listed,
   * or holding a live binding.
   */
  async visibleTo(organizationId: string, connection: ConnectionRecord): Promise<boolean> {
    if (connection.organizationId === organizationId) {
      return true;
    }
    if (
      connection.accessControl.mode === 'public' ||
      openToAsk(connection) ||
      connection.accessControl.allowedOrganizations.includes(organizationId)
    ) {
      return true;
    }
    return this.bindings.organizationHasLiveBinding(organizationId, connection.id);
  }

  /**
   * A connection a buyer organization may use (for order-book fields, previews, bindings); `shareCode` lets in a
   * buyer outside the whitelist (checked only, no use spent: a use is an admission, see `admit`). NOT_FOUND when it
   * may not see it.
   */
  async forBuyer(
    organizationId: string,
    connectionId: string,
    shareCode?: string,
  ): Promise<ConnectionRecord> {
    const connection = isUuid(connectionId) ? await this.connections.findById(connectionId) : null;
    if (!connection) {
      throw notFound('connection');
    }
    if (await this.visibleTo(organizationId, connection)) {
      return connection;
    }
    if (shareCode === undefined) {
      throw notFound('connection');
    }
    await this.linkForBuyer(organizationId, connection, shareCode, false);
    return connection;
  }

  /**
   * How a new binding of `organizationId` is admitted: public → active; whitelisted → active (both pending while
   * the supplier's refusal of the organization stands: it rejected one of its bindings to this connection and has not
   * approved one since); approval mode for a listed organization, or for anyone when the list is empty → pending;
   * else a valid share code of this connection → pending, and the organization
   * counts as one use of the link (the supplier approves or rejects). Anyone else: NOT_FOUND. A disabled
   * connection takes no bindings (INVALID_STATE). Runs in the binding's transaction: the connection is read again
   * there with a share lock and admitted against that state (see `ConnectionRepository.findForAdmission`), and the
   * link stays locked. Returns the admission and the locked connection.
   */
  async admit(
    organizationId: string,
    connectionId: string,
    shareCode?: string,
  ): Promise<BindingAdmission & { connection: ConnectionRecord }> {
    const connection = await this.connections.findForAdmission(connectionId);
    if (!connection) {
      throw notFound('connection');
    }
    return { ...(await this.admitTo(organizationId, connection, shareCode)), connection };
  }

  private async admitTo(
    organizationId: string,
    connection: ConnectionRecord,
    shareCode?: string,
  ): Promise<BindingAdmission> {
    if (connection.status === 'disabled') {
      throw connectionInvalidState(connection, 'a disabled connection takes no new bindings');
    }
    const { mode, allowedOrganizations } = connection.accessControl;
    const listed =
      allowedOrganizations.includes(organizationId) || connection.organizationId === organizationId;
    if (mode === 'public' || (mode === 'whitelist' && listed)) {
      // A supplier's reject stands for the organization on this connection: its next binding waits for approval
      // instead of being admitted at once (docs/supply-chain.md, "Bindings"; approving it lifts the refusal).
      const refused = await this.bindings.isRefused(connection.id, organizationId);
      return { status: refused ? 'pending' : 'active', admittedVia: mode, shareLinkId: null };
    }
    if (mode === 'approval' && (listed || openToAsk(connection))) {
      return { status: 'pending', admittedVia: 'approval', shareLinkId: null };
    }
    if (shareCode === undefined) {
      throw notFound('connection');
    }
    const link = await this.linkForBuyer(organizationId, connection, shareCode, true);
    await this.connections.touchLink(link.id);
    return { status: 'pending', admittedVia: 'share_link', shareLinkId: link.id };
  }

  /**
   * The share link `code` names, as a buyer organization presents it for `connection` (docs/supply-chain.md,
   * "Share links"). No such code, or a code of another connection, is the NOT_FOUND of an unknown connection, so a
   * stranger's own codes tell it nothing about other tenants' ids; then a revoked or expired link (or a disabled
   * connection) → 410 SHARE_LINK_EXPIRED; then, when `maxUses` organizations were admitted through it and this one
   * is not among them, 410 SHARE_LINK_EXHAUSTED. `lock` (inside the admitting transaction) serializes admissions,
   * so concurrent ones never pass `maxUses`.
   */
  private async linkForBuyer(
    organizationId: string,
    connection: ConnectionRecord,
    code: string,
    lock: boolean,
  ): Promise<ShareLinkRecord> {
    const link = await this.findLink(code, lock);
    if (!link || link.connectionId !== connection.id) {
      throw notFound('connection');
    }
    this.checkLinkOpen(link, connection);
    // A statement after the lock: it sees the admissions committed while this one waited.
    const uses = lock ? await this.connections.admittedCount(link) : link.uses;
    if (
      link.maxUses !== null &&
      uses >= link.maxUses &&
      !(await this.connections.admitsAny(link, [organizationId]))
    ) {
      throw shareLinkExhausted({ ...link, uses });
    }
    return link;
  }

  async findLink(code: string, lock: boolean): Promise<ShareLinkRecord | null> {
    return typeof code === 'string' && code.length > 0 && code.length <= 128
      ? this.connections.findLinkByHash(hashShareCode(code), lock)
      : null;
  }

  /** The link's connection; a revoked or expired link, or a disabled connection → 410 SHARE_LINK_EXPIRED. */
  checkLinkOpen(link: ShareLinkRecord, connection: ConnectionRecord | null): ConnectionRecord {
    if (link.revokedAt || !connection || connection.status === 'disabled') {
      throw shareLinkExpired(
        link,
        link.revokedAt ? 'the share link was revoked' : 'the connection is disabled',
      );
    }
    if (link.expiresAt && new Date(link.expiresAt).getTime() <= Date.now()) {
      throw shareLinkExpired(link, `the share link expired at ${isoOrNull(link.expiresAt)}`);
    }
    return connection;
  }
}

/** INVALID_STATE naming the connection and its state. */
export function connectionInvalidState(connection: ConnectionRecord, reason: string): AppException {
  return new AppException(ErrorCode.INVALID_STATE, {
    details: [{ field: 'status', reason }],
    payload: { connectionId: connection.id, status: connection.status },
  });
}

function linkPayload(link: ShareLinkRecord): {
  expiresAt: string | null;
  maxUses: number | null;
  uses: number;
} {
  return { expiresAt: isoOrNull(link.expiresAt), maxUses: link.maxUses, uses: link.uses };
}

export function shareLinkExpired(link: ShareLinkRecord, reason: string): AppException {
  return new AppException(ErrorCode.SHARE_LINK_EXPIRED, {
    details: [{ reason }],
    payload: linkPayload(link),
  });
}

export function shareLinkExhausted(link: ShareLinkRecord): AppException {
  return new AppException(ErrorCode.SHARE_LINK_EXHAUSTED, {
    details: [
      {
        reason: `${link.uses} of ${link.maxUses ?? 0} organizations were admitted through the share link; it admits no other`,
      },
    ],
    payload: linkPayload(link),
  });
}
