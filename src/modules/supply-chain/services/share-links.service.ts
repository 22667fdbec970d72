import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import QRCode from 'qrcode';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import type { ShareLinkRecord } from '../domain/supply-chain.types.js';
import type {
  CreateShareLinkDto,
  SharedConnectionDto,
  ShareLinkInfoDto,
  ShareLinkResponseDto,
} from '../dtos/connection.dto.js';
import { ConnectionRepository } from '../repositories/connection.repository.js';
import { isUuid } from '../repositories/sql.js';
import {
  ConnectionAdmissionService,
  connectionInvalidState,
  hashShareCode,
  isoOrNull,
  shareLinkExhausted,
  shareLinkExpired,
} from './connection-admission.service.js';
import { ConnectionsService } from './connections.service.js';
import { notFound, SupplyChainAccessService } from './supply-chain-access.service.js';

/**
 * Share links of a connection (docs/supply-chain.md, "Share links"): the supplier's owners/admins create, list and
 * revoke them; any signed-in user holding a code reads what it shares. Only the code's hash is stored.
 */
@Injectable()
export class ShareLinksService {
  constructor(
    private readonly connections: ConnectionsService,
    private readonly admission: ConnectionAdmissionService,
    private readonly access: SupplyChainAccessService,
    private readonly repository: ConnectionRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async createShareLink(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    dto: CreateShareLinkDto,
  ): Promise<ShareLinkResponseDto> {
    const connection = await this.connections.owned(principal, organizationId, connectionId, 'admin');
    if (connection.status === 'disabled') {
      throw connectionInvalidState(connection, 'a disabled connection cannot be shared');
    }
    const expiresAt = dto.expiresAt ? new Date(dto.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw AppException.validation([{ field: 'expiresAt', reason: 'expiresAt must be in the future' }]);
    }
    const code = randomBytes(18).toString('base64url');
    const link = await this.repository.insertLink({
      organizationId,
      connectionId: connection.id,
      codeHash: hashShareCode(code),
      expiresAt,
      maxUses: dto.maxUses ?? null,
      createdBy: principal.userId,
    });
    const shareUrl = `${this.config.publicBaseUrl.replace(/\/+$/, '')}/connect/share/${code}`;
    const qrCode = await QRCode.toDataURL(shareUrl, { errorCorrectionLevel: 'M', margin: 2, width: 256 });
    return {
      id: link.id,
      shareUrl,
      code,
      qrCode,
      expiresAt: isoOrNull(link.expiresAt),
      maxUses: link.maxUses,
      uses: link.uses,
    };
  }

  async listShareLinks(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    query: { page: number; pageSize: number },
  ): Promise<Page<ShareLinkInfoDto>> {
    const connection = await this.connections.owned(principal, organizationId, connectionId, 'admin');
    const { items, total } = await this.repository.listLinks(organizationId, connection.id, {
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return pageOf(
      items.map((link) => this.linkInfo(link)),
      total,
      query,
    );
  }

  async revokeShareLink(
    principal: Principal,
    organizationId: string,
    connectionId: string,
    linkId: string,
  ): Promise<ShareLinkInfoDto> {
    const connection = await this.connections.owned(principal, organizationId, connectionId, 'admin');
    const link = isUuid(linkId)
      ? await this.repository.revokeLink(organizationId, connection.id, linkId)
      : null;
    if (!link) {
      throw notFound('share link');
    }
    return this.linkInfo(link);
  }

  /**
   * `GET /connect/share/{code}`: any signed-in user holding the code sees the connection's summary. A read: it
   * spends no use, it only checks the link — revoked, expired (or its connection disabled) → 410
   * SHARE_LINK_EXPIRED; `maxUses` organizations admitted and none of them the caller's → 410 SHARE_LINK_EXHAUSTED.
   */
  async resolveShareCode(principal: Principal, code: string): Promise<SharedConnectionDto> {
    const link = await this.admission.findLink(code, false);
    if (!link) {
      throw notFound('share link');
    }
    const connection = this.admission.checkLinkOpen(link, await this.repository.findById(link.connectionId));
    if (link.maxUses !== null && link.uses >= link.maxUses) {
      const organizationIds = await this.access.activeOrganizationIds(principal);
      if (!(await this.repository.admitsAny(link, organizationIds))) {
        throw shareLinkExhausted(link);
      }
    }
    const dto = await this.connections.toDto(connection, 'shared');
    if (!dto.catalog) {
      throw shareLinkExpired(link, 'the catalog was deleted');
    }
    return {
      connectionId: connection.id,
      name: connection.name,
      sourceOrganization: dto.sourceOrganization,
      catalog: dto.catalog,
      shareMode: connection.shareMode,
      accessMode: connection.accessControl.mode,
      status: connection.status,
      expiresAt: isoOrNull(link.expiresAt),
      remainingUses: link.maxUses === null ? null : Math.max(0, link.maxUses - link.uses),
    };
  }

  private linkInfo(link: ShareLinkRecord): ShareLinkInfoDto {
    return {
      id: link.id,
      expiresAt: isoOrNull(link.expiresAt),
      maxUses: link.maxUses,
      uses: link.uses,
      revokedAt: isoOrNull(link.revokedAt),
      createdAt: new Date(link.createdAt).toISOString(),
    };
  }
}
