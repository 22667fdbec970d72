import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey } from 'jose';
import { IsNull, Repository } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { SigningKeyEntity } from '../entities/signing-key.entity.js';

export const SIGNING_ALGORITHM = 'RS256';

interface LoadedKey {
  kid: string;
  privateKey: CryptoKey;
}

/**
 * The token issuer's key pairs, created on first start and kept in PostgreSQL so every instance signs with
 * the same key. `rotate()` retires the current key; retired public keys stay published in the JWKS for
 * one access-token lifetime so tokens already issued keep verifying.
 */
@Injectable()
export class SigningKeyService {
  private current?: Promise<LoadedKey>;

  constructor(
    @InjectRepository(SigningKeyEntity) private readonly keys: Repository<SigningKeyEntity>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  signingKey(): Promise<LoadedKey> {
    this.current ??= this.loadOrCreate().catch((error: unknown) => {
      this.current = undefined;
      throw error;
    });
    return this.current;
  }

  /** Public keys that verify tokens: the active key and those retired less than a token lifetime ago. */
  async publicJwks(): Promise<JWK[]> {
    const rows = await this.keys
      .createQueryBuilder('k')
      .where('k.retired_at IS NULL OR k.retired_at > now() - make_interval(secs => :ttl)', {
        ttl: this.config.auth.accessTokenTtlSeconds,
      })
      .orderBy('k.created_at', 'DESC')
      .getMany();
    return rows.map((row) => ({ ...row.publicJwk, kid: row.kid, alg: row.algorithm, use: 'sig' }));
  }

  async rotate(): Promise<string> {
    await this.keys.manager.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('quire.signing_keys'))`);
      await manager.query('UPDATE signing_keys SET retired_at = now() WHERE retired_at IS NULL');
      await manager.insert(SigningKeyEntity, await this.newKey());
    });
    this.current = undefined;
    return (await this.signingKey()).kid;
  }

  private async loadOrCreate(): Promise<LoadedKey> {
    // Two instances starting together must not create two active keys: serialise on an advisory lock.
    const row = await this.keys.manager.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('quire.signing_keys'))`);
      const existing = await manager.findOne(SigningKeyEntity, {
        where: { retiredAt: IsNull() },
        order: { createdAt: 'DESC' },
      });
      if (existing) {
        return existing;
      }
      const created = await this.newKey();
      await manager.insert(SigningKeyEntity, created);
      return created;
    });
    const privateKey = (await importJWK(row.privateJwk, SIGNING_ALGORITHM)) as CryptoKey;
    return { kid: row.kid, privateKey };
  }

  private async newKey(): Promise<SigningKeyEntity> {
    const pair = await generateKeyPair(SIGNING_ALGORITHM, { modulusLength: 2048, extractable: true });
    const key = new SigningKeyEntity();
    key.kid = randomUUID();
    key.algorithm = SIGNING_ALGORITHM;
    key.publicJwk = await exportJWK(pair.publicKey);
    key.privateJwk = await exportJWK(pair.privateKey);
    return key;
  }
}
