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

/** How long an instance signs with the key it loaded before looking for a newer one (another instance may rotate). */
const KEY_CACHE_MS = 60_000;
/** Retired keys stay published this long beyond one token lifetime, covering instances still on the old key. */
const RETIREMENT_MARGIN_SECONDS = (2 * KEY_CACHE_MS) / 1000 + 60;

/**
 * The token issuer's key pairs, created on first start and kept in PostgreSQL so every instance signs with
 * the same key. `rotate()` retires the current key; retired public keys stay published in the JWKS for
 * one access-token lifetime so tokens already issued keep verifying.
 */
@Injectable()
export class SigningKeyService {
  private current?: Promise<LoadedKey>;
  private loadedAt = 0;

  constructor(
    @InjectRepository(SigningKeyEntity) private readonly keys: Repository<SigningKeyEntity>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  signingKey(): Promise<LoadedKey> {
    if (Date.now() - this.loadedAt > KEY_CACHE_MS) {
      this.current = undefined;
    }
    if (!this.current) {
      this.loadedAt = Date.now();
    }
    this.current ??= this.loadOrCreate().catch((error: unknown) => {
      this.current = undefined;
      throw error;
    });
    return this.current;
  }

  /** Public keys that verify tokens: the active key and those retired less than a token lifetime (plus a margin) ago. */
  async publicJwks(): Promise<JWK[]> {
    const rows = await this.keys
      .createQueryBuilder('k')
      .where('k.retired_at IS NULL OR k.retired_at > now() - make_interval(secs => :ttl)', {
        ttl: this.config.auth.accessTokenTtlSeconds + RETIREMENT_MARGIN_SECONDS,
      })
      .orderBy('k.created_at', 'DESC')
      .getMany();
    return rows.map((row) => ({ ...row.publicJwk, kid: row.kid, alg: row.algorithm, use: 'sig' }));
  }

  /** Retires the active key and creates a new one; returns the new key id. */
  async rotate(): Promise<string> {
    await this.rotateIfOlderThan(0);
    return (await this.signingKey()).kid;
  }

  /**
   * Rotates when the active key is older than `maxAgeSeconds` (0: always). Serialised on an advisory lock
   * and re-checked under it, so instances running the same schedule rotate once. True when it rotated. A scheduled
   * check (`maxAgeSeconds` > 0) on a database without a key leaves the first key to its first use (loadOrCreate).
   */
  async rotateIfOlderThan(maxAgeSeconds: number): Promise<boolean> {
    const rotated = await this.keys.manager.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('quire.signing_keys'))`);
      const active = await manager.query<Array<{ fresh: boolean }>>(
        `SELECT created_at > now() - make_interval(secs => $1) AS fresh FROM signing_keys WHERE retired_at IS NULL`,
        [maxAgeSeconds],
      );
      if (maxAgeSeconds > 0 && (active.length === 0 || active.some((key) => key.fresh))) {
        return false;
      }
      await manager.query('UPDATE signing_keys SET retired_at = now() WHERE retired_at IS NULL');
      await manager.insert(SigningKeyEntity, await this.newKey());
      return true;
    });
    if (rotated) {
      this.current = undefined;
    }
    return rotated;
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
