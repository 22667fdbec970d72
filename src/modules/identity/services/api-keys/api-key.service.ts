import { BlockList, isIP } from 'node:net';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal } from '../../../../common/auth/principal.js';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import { type Page, offsetOf, pageOf } from '../../../../common/http/pagination.js';
import { TransactionHost } from '../../../../database/transaction-host.js';
import {
  ApiKeyResponseDto,
  type ApiKeyUsageDto,
  type ApiKeyWithSecretDto,
  type CreateApiKeyDto,
} from '../../dtos/api-key.dto.js';
import { ApiKeyEntity } from '../../entities/api-key.entity.js';
import { assertKnownScopes } from '../issuer/oauth-client.service.js';
import { JwtCredentialVerifier } from '../jwt-credential.verifier.js';
import { hashToken, newOpaqueToken } from '../secret-tokens.js';

/** Every API key starts with this, so keys are recognisable (and found by secret scanners). */
export const API_KEY_PREFIX = 'qk_';

/** IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is compared as IPv4. */
function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

/** Parses an allow-list entry (`203.0.113.7`, `203.0.113.0/24`, `2001:db8::/32`); null when invalid. */
function parseEntry(entry: string): { address: string; prefix?: number; family: 'ipv4' | 'ipv6' } | null {
  const [address, bits, extra] = entry.trim().split('/');
  const version = isIP(address);
  if (version === 0 || extra !== undefined) {
    return null;
  }
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) {
    return { address, family };
  }
  const prefix = Number(bits);
  if (!/^\d+$/.test(bits) || prefix > (version === 4 ? 32 : 128)) {
    return null;
  }
  return { address, prefix, family };
}

/**
 * Personal API keys: created shown-once (stored as SHA-256), listed, revoked. Registered with the JWT
 * verifier for non-JWT bearer credentials (`Authorization: Bearer qk_…` or `X-API-Key: qk_…`). A key acts
 * for its owner with only its own scopes; revoked or expired keys get 401, a request from outside the
 * key's IP allow-list 403. Each use updates lastUsedAt and appends to the usage log.
 */
@Injectable()
export class ApiKeyService implements OnModuleInit {
  constructor(
    private readonly tx: TransactionHost,
    private readonly verifier: JwtCredentialVerifier,
  ) {}

  onModuleInit(): void {
    this.verifier.useOtherVerifier((credential, request) => this.verify(credential, request));
  }

  async create(principal: Principal, dto: CreateApiKeyDto): Promise<ApiKeyWithSecretDto> {
    assertKnownScopes(dto.scopes, 'scopes');
    const expiresAt = dto.expiresAt ? new Date(dto.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw AppException.validation([{ field: 'expiresAt', reason: 'must be in the future' }]);
    }
    const ipAllowlist = (dto.ipAllowlist ?? []).map((entry, index) => {
      if (!parseEntry(entry)) {
        throw AppException.validation([
          { field: `ipAllowlist[${index}]`, reason: 'must be an IP address or CIDR range' },
        ]);
      }
      return entry.trim();
    });
    const key = newOpaqueToken(API_KEY_PREFIX);
    const entity = this.tx.manager.create(ApiKeyEntity, {
      userId: principal.userId,
      name: dto.name.trim(),
      prefix: key.slice(0, API_KEY_PREFIX.length + 8),
      keyHash: hashToken(key),
      scopes: [...new Set(dto.scopes)],
      ipAllowlist,
      expiresAt,
    });
    await this.tx.manager.save(entity);
    return { ...ApiKeyResponseDto.from(entity), key };
  }

  async list(
    principal: Principal,
    query: { page: number; pageSize: number },
  ): Promise<Page<ApiKeyResponseDto>> {
    const [items, total] = await this.tx.manager
      .createQueryBuilder(ApiKeyEntity, 'k')
      .where('k.user_id = :userId', { userId: principal.userId })
      .orderBy('k.created_at', 'DESC')
      .addOrderBy('k.id', 'ASC')
      .skip(offsetOf(query))
      .take(query.pageSize)
      .getManyAndCount();
    return pageOf(
      items.map((key) => ApiKeyResponseDto.from(key)),
      total,
      query,
    );
  }

  /** Revokes the key (idempotent); NOT_FOUND for another user's key. */
  async revoke(principal: Principal, keyId: string): Promise<ApiKeyResponseDto> {
    const key = await this.owned(principal, keyId);
    if (!key.revokedAt) {
      await this.tx.manager.query(
        `UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`,
        [key.id],
      );
    }
    return ApiKeyResponseDto.from(await this.owned(principal, keyId));
  }

  async usage(
    principal: Principal,
    keyId: string,
    query: { page: number; pageSize: number },
  ): Promise<Page<ApiKeyUsageDto>> {
    const key = await this.owned(principal, keyId);
    const rows = await this.tx.manager.query<
      Array<{ used_at: Date; ip: string | null; method: string; path: string }>
    >(
      `SELECT used_at, ip, method, path FROM api_key_usage WHERE api_key_id = $1 ORDER BY used_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [key.id, query.pageSize, offsetOf(query)],
    );
    const [{ total }] = await this.tx.manager.query<Array<{ total: number }>>(
      `SELECT count(*)::int AS total FROM api_key_usage WHERE api_key_id = $1`,
      [key.id],
    );
    const items = rows.map((row) => ({
      usedAt: new Date(row.used_at).toISOString(),
      ip: row.ip,
      method: row.method,
      path: row.path,
    }));
    return pageOf(items, total, query);
  }

  /** The credential verifier hook: undefined for anything that is not a known key. */
  async verify(credential: string, request: Request): Promise<Principal | undefined> {
    if (!credential.startsWith(API_KEY_PREFIX)) {
      return undefined;
    }
    const key = await this.tx.manager.findOne(ApiKeyEntity, { where: { keyHash: hashToken(credential) } });
    if (!key) {
      return undefined;
    }
    // A key that was valid and no longer is answers as an ended session does (spec 7: INVALID_TOKEN, "token invalid
    // or expired"); an unknown one, like any credential the service never issued, is UNAUTHORIZED.
    if (key.revokedAt) {
      throw new AppException(ErrorCode.INVALID_TOKEN, { details: [{ reason: 'API key revoked' }] });
    }
    if (key.expiresAt && new Date(key.expiresAt).getTime() <= Date.now()) {
      throw new AppException(ErrorCode.INVALID_TOKEN, { details: [{ reason: 'API key expired' }] });
    }
    const ip = normalizeIp(request.ip ?? '');
    if (key.ipAllowlist.length > 0 && !this.allowed(key.ipAllowlist, ip)) {
      throw AppException.forbidden('this API key may not be used from this address');
    }
    await this.tx.manager.query(
      `WITH touched AS (UPDATE api_keys SET last_used_at = now(), last_used_ip = $2 WHERE id = $1)
       INSERT INTO api_key_usage (api_key_id, ip, method, path) VALUES ($1, $2, $3, $4)`,
      [key.id, ip || null, request.method, (request.originalUrl ?? request.url).split('?')[0].slice(0, 1024)],
    );
    return { userId: key.userId, kind: 'api_key', scopes: key.scopes, apiKeyId: key.id };
  }

  private allowed(entries: string[], ip: string): boolean {
    const family = isIP(ip);
    if (family === 0) {
      return false;
    }
    const list = new BlockList();
    for (const entry of entries) {
      const parsed = parseEntry(entry);
      if (!parsed) {
        continue;
      }
      if (parsed.prefix === undefined) {
        list.addAddress(parsed.address, parsed.family);
      } else {
        list.addSubnet(parsed.address, parsed.prefix, parsed.family);
      }
    }
    return list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  }

  private async owned(principal: Principal, keyId: string): Promise<ApiKeyEntity> {
    const key = await this.tx.manager.findOne(ApiKeyEntity, {
      where: { id: keyId, userId: principal.userId },
    });
    if (!key) {
      throw AppException.notFound('API key');
    }
    return key;
  }
}
