import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../../common/auth/principal.js';
import { SCOPES } from '../../../../common/auth/principal.js';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import { type Page, pageOf, offsetOf } from '../../../../common/http/pagination.js';
import { TransactionHost } from '../../../../database/transaction-host.js';
import {
  type CreateOAuthClientDto,
  OAuthClientResponseDto,
  type OAuthClientWithSecretDto,
} from '../../dtos/oauth-client.dto.js';
import { type ClientGrantType, OAuthClientEntity } from '../../entities/oauth-client.entity.js';
import { hashToken, newOpaqueToken, safeEqual } from '../secret-tokens.js';
import { SessionService } from '../session.service.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Throws INVALID_SCOPE unless every scope is one of spec 5.8's. */
export function assertKnownScopes(scopes: string[], field: string): void {
  const unknown = scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown.length > 0) {
    throw new AppException(ErrorCode.INVALID_SCOPE, {
      details: [{ field, reason: `unknown scope ${unknown.join(' ')}` }],
    });
  }
}

/** OAuth clients: registered by a user (the owner), who alone sees and manages them. */
@Injectable()
export class OAuthClientService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly sessions: SessionService,
  ) {}

  async create(principal: Principal, dto: CreateOAuthClientDto): Promise<OAuthClientWithSecretDto> {
    // `scopes` is taken for `allowedScopes`: the spec's API keys name their scopes so, and the client body is not shown.
    const allowedScopes = dto.allowedScopes ?? dto.scopes;
    if (!allowedScopes) {
      throw AppException.validation([{ field: 'allowedScopes', reason: 'allowedScopes (or scopes) must list at least one scope' }]);
    }
    if (dto.allowedScopes && dto.scopes && JSON.stringify([...new Set(dto.allowedScopes)].sort()) !== JSON.stringify([...new Set(dto.scopes)].sort())) {
      throw AppException.validation([{ field: 'scopes', reason: 'scopes and allowedScopes differ; give one of them' }]);
    }
    assertKnownScopes(allowedScopes, dto.allowedScopes ? 'allowedScopes' : 'scopes');
    const redirectUris = [...new Set(dto.redirectUris ?? [])];
    // Without grantTypes: every grant the client can use — the code flow (with refresh) when it has redirect URIs,
    // client_credentials always (docs/auth.md).
    const grantTypes: ClientGrantType[] = [
      ...new Set(dto.grantTypes ?? (redirectUris.length > 0 ? (['authorization_code', 'refresh_token', 'client_credentials'] as const) : (['client_credentials'] as const))),
    ];
    // Refresh tokens are only issued by the code flow: without it the grant could never be used, and a client
    // limited to it could obtain no token at all.
    if (grantTypes.includes('refresh_token') && !grantTypes.includes('authorization_code')) {
      throw AppException.validation([
        {
          field: 'grantTypes',
          reason: 'refresh_token needs authorization_code (only the code flow issues refresh tokens)',
        },
      ]);
    }
    redirectUris.forEach((uri, index) => this.assertRedirectUri(uri, index));
    if (grantTypes.includes('authorization_code') && redirectUris.length === 0) {
      throw AppException.validation([
        { field: 'redirectUris', reason: 'authorization_code needs at least one redirect URI' },
      ]);
    }
    const secret = newOpaqueToken('qcs_');
    const client = this.tx.manager.create(OAuthClientEntity, {
      clientId: `qc_${randomBytes(12).toString('hex')}`,
      ownerId: principal.userId,
      name: dto.name.trim(),
      redirectUris,
      allowedScopes: [...new Set(allowedScopes)],
      grantTypes,
      secretHash: hashToken(secret),
      secretRotatedAt: null,
    });
    await this.tx.manager.save(client);
    return { ...OAuthClientResponseDto.from(client), clientSecret: secret };
  }

  async list(
    principal: Principal,
    query: { page: number; pageSize: number },
  ): Promise<Page<OAuthClientResponseDto>> {
    const [items, total] = await this.tx.manager
      .createQueryBuilder(OAuthClientEntity, 'c')
      .where('c.owner_id = :owner', { owner: principal.userId })
      .orderBy('c.created_at', 'DESC')
      .addOrderBy('c.id', 'ASC')
      .skip(offsetOf(query))
      .take(query.pageSize)
      .getManyAndCount();
    return pageOf(
      items.map((client) => OAuthClientResponseDto.from(client)),
      total,
      query,
    );
  }

  async get(principal: Principal, clientId: string): Promise<OAuthClientResponseDto> {
    return OAuthClientResponseDto.from(await this.owned(principal, clientId));
  }

  /** Deletes the client, its pending codes and every authorization (session) granted to it. */
  async remove(principal: Principal, clientId: string): Promise<void> {
    await this.tx.run(async () => {
      const client = await this.owned(principal, clientId, true);
      await this.sessions.revokeForClient(client.clientId);
      await this.tx.manager.delete(OAuthClientEntity, { id: client.id });
    });
  }

  /** A new secret; the old one stops working at once. */
  async regenerateSecret(principal: Principal, clientId: string): Promise<OAuthClientWithSecretDto> {
    return this.tx.run(async () => {
      const client = await this.owned(principal, clientId, true);
      const secret = newOpaqueToken('qcs_');
      client.secretHash = hashToken(secret);
      client.secretRotatedAt = new Date();
      await this.tx.manager.save(client);
      return { ...OAuthClientResponseDto.from(client), clientSecret: secret };
    });
  }

  async findByClientId(clientId: string): Promise<OAuthClientEntity | null> {
    return this.tx.manager.findOne(OAuthClientEntity, { where: { clientId } });
  }

  /** The client if the secret is right; INVALID_CLIENT otherwise (without saying which part was wrong). */
  async authenticate(clientId: string, secret: string): Promise<OAuthClientEntity> {
    const client = await this.findByClientId(clientId);
    if (!client || !safeEqual(client.secretHash, hashToken(secret))) {
      throw new AppException(ErrorCode.INVALID_CLIENT, {
        details: [{ reason: 'unknown client or wrong secret' }],
      });
    }
    return client;
  }

  private async owned(principal: Principal, clientId: string, lock = false): Promise<OAuthClientEntity> {
    const client = await this.tx.manager.findOne(OAuthClientEntity, {
      where: { clientId, ownerId: principal.userId },
      ...(lock && this.tx.inTransaction ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!client) {
      throw AppException.notFound('OAuth client');
    }
    return client;
  }

  private assertRedirectUri(uri: string, index: number): void {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      throw AppException.validation([{ field: `redirectUris[${index}]`, reason: 'must be an absolute URL' }]);
    }
    const allowed =
      url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
    if (!allowed || url.hash || url.username || url.password) {
      throw AppException.validation([
        {
          field: `redirectUris[${index}]`,
          reason: 'must be https (or http on a loopback host), without fragment or credentials',
        },
      ]);
    }
  }
}
