import { Injectable } from '@nestjs/common';
import { AppException } from '../../../../common/errors/app.exception.js';
import { type Page, offsetOf, pageOf } from '../../../../common/http/pagination.js';
import { TransactionHost } from '../../../../database/transaction-host.js';
import {
  type CreateOidcProviderDto,
  OidcProviderAdminDto,
  type OidcProviderPublicDto,
  type UpdateOidcProviderDto,
} from '../../dtos/oidc-provider.dto.js';
import { type OAuthProvider, OidcProviderEntity } from '../../entities/oidc-provider.entity.js';
import { SecretBoxService } from '../secret-box.service.js';

const DISPLAY_NAMES: Record<OAuthProvider, string> = {
  google: 'Google',
  github: 'GitHub',
  wechat: 'WeChat',
  dingtalk: 'DingTalk',
  feishu: 'Feishu',
};

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Provider URLs must be https, or plain http on a loopback host (development, tests): the relying party
 * refuses anything else at sign-in, where it would only show as "not reachable" (503) and the provider would
 * already be listed publicly. Refused here instead, where the administrator sees why.
 */
function assertProviderUrl(value: string | null | undefined, field: string): void {
  if (value === undefined || value === null) {
    return;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw AppException.validation([{ field, reason: 'must be an absolute URL' }]);
  }
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)))) {
    throw AppException.validation([{ field, reason: 'must be https (plain http only on a loopback host)' }]);
  }
}

/** Third-party login providers: managed by platform administrators, listed publicly when enabled. */
@Injectable()
export class OidcProviderAdminService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly box: SecretBoxService,
  ) {}

  async listPublic(query: { page: number; pageSize: number }): Promise<Page<OidcProviderPublicDto>> {
    const [items, total] = await this.tx.manager.findAndCount(OidcProviderEntity, {
      where: { enabled: true },
      order: { provider: 'ASC' },
      skip: offsetOf(query),
      take: query.pageSize,
    });
    return pageOf(
      items.map((p) => ({
        provider: p.provider,
        displayName: p.displayName,
        authorizeUrl: `/api/v1/auth/oauth/${p.provider}/authorize`,
      })),
      total,
      query,
    );
  }

  async list(query: { page: number; pageSize: number }): Promise<Page<OidcProviderAdminDto>> {
    const [items, total] = await this.tx.manager.findAndCount(OidcProviderEntity, {
      order: { provider: 'ASC' },
      skip: offsetOf(query),
      take: query.pageSize,
    });
    return pageOf(
      items.map((p) => OidcProviderAdminDto.from(p)),
      total,
      query,
    );
  }

  async create(dto: CreateOidcProviderDto): Promise<OidcProviderAdminDto> {
    this.assertUrls(dto);
    this.assertEndpoints(dto.authorizationEndpoint, dto.tokenEndpoint);
    const entity = this.tx.manager.create(OidcProviderEntity, {
      provider: dto.provider,
      displayName: dto.displayName?.trim() ?? DISPLAY_NAMES[dto.provider],
      issuer: dto.issuer.replace(/\/+$/, ''),
      clientId: dto.clientId,
      clientSecretEncrypted: dto.clientSecret ? await this.box.seal(dto.clientSecret) : null,
      scopes: [...new Set(dto.scopes ?? ['openid', 'email', 'profile'])],
      enabled: dto.enabled ?? true,
      authorizationEndpoint: dto.authorizationEndpoint ?? null,
      tokenEndpoint: dto.tokenEndpoint ?? null,
      userinfoEndpoint: dto.userinfoEndpoint ?? null,
    });
    await this.tx.manager.save(entity);
    return OidcProviderAdminDto.from(entity);
  }

  async update(providerId: string, dto: UpdateOidcProviderDto): Promise<OidcProviderAdminDto> {
    this.assertUrls(dto);
    return this.tx.run(async () => {
      const entity = await this.get(providerId);
      const sealed = dto.clientSecret !== undefined ? await this.box.seal(dto.clientSecret) : undefined;
      for (const key of [
        'displayName',
        'clientId',
        'enabled',
        'authorizationEndpoint',
        'tokenEndpoint',
        'userinfoEndpoint',
      ] as const) {
        if (dto[key] !== undefined) {
          Object.assign(entity, { [key]: dto[key] });
        }
      }
      if (dto.issuer !== undefined) {
        entity.issuer = dto.issuer.replace(/\/+$/, '');
      }
      if (dto.scopes !== undefined) {
        entity.scopes = [...new Set(dto.scopes)];
      }
      if (sealed !== undefined) {
        entity.clientSecretEncrypted = sealed;
      }
      this.assertEndpoints(entity.authorizationEndpoint ?? undefined, entity.tokenEndpoint ?? undefined);
      entity.updatedAt = new Date();
      await this.tx.manager.save(entity);
      return OidcProviderAdminDto.from(entity);
    });
  }

  async remove(providerId: string): Promise<void> {
    const entity = await this.get(providerId);
    await this.tx.manager.delete(OidcProviderEntity, { id: entity.id });
  }

  /** Every enabled provider, by provider name (the sign-in buttons of the /authorize page). */
  listEnabled(): Promise<OidcProviderEntity[]> {
    return this.tx.manager.find(OidcProviderEntity, { where: { enabled: true }, order: { provider: 'ASC' } });
  }

  /** The enabled configuration of a provider, or NOT_FOUND. */
  async enabled(provider: OAuthProvider): Promise<OidcProviderEntity> {
    const entity = await this.tx.manager.findOne(OidcProviderEntity, { where: { provider, enabled: true } });
    if (!entity) {
      throw AppException.notFound(`login provider ${provider}`);
    }
    return entity;
  }

  private async get(providerId: string): Promise<OidcProviderEntity> {
    const entity = await this.tx.manager.findOne(OidcProviderEntity, { where: { id: providerId } });
    if (!entity) {
      throw AppException.notFound('login provider');
    }
    return entity;
  }

  private assertUrls(dto: UpdateOidcProviderDto): void {
    for (const field of ['issuer', 'authorizationEndpoint', 'tokenEndpoint', 'userinfoEndpoint'] as const) {
      assertProviderUrl(dto[field], field);
    }
  }

  private assertEndpoints(authorizationEndpoint?: string, tokenEndpoint?: string): void {
    if ((authorizationEndpoint === undefined) !== (tokenEndpoint === undefined)) {
      throw AppException.validation([
        { field: 'tokenEndpoint', reason: 'authorizationEndpoint and tokenEndpoint are set together' },
      ]);
    }
  }
}
