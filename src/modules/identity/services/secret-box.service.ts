import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';

interface LoadedKey {
  key: Buffer;
  id: string;
}

/**
 * Encrypts secrets the service must be able to read back (third-party client secrets, TOTP seeds) with
 * AES-256-GCM. The key is SHA-256 of ENCRYPTION_KEY; without it a random key is generated once and kept
 * in `identity_secrets` (fine for development; production should set ENCRYPTION_KEY so the key does not
 * live next to the data). Boxes are `v1.<key id>.<iv>.<tag>.<ciphertext>`, so a box sealed with another
 * key is recognised instead of decrypting to garbage.
 */
@Injectable()
export class SecretBoxService {
  private loaded?: Promise<LoadedKey>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async seal(plain: string): Promise<string> {
    const { key, id } = await this.key();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [
      'v1',
      id,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      body.toString('base64url'),
    ].join('.');
  }

  async open(box: string): Promise<string> {
    const { key, id } = await this.key();
    const [version, keyId, iv, tag, body] = box.split('.');
    if (version !== 'v1' || keyId !== id || !iv || !tag || body === undefined) {
      throw new Error('secret was sealed with another encryption key (ENCRYPTION_KEY changed?)');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }

  /**
   * HMAC-SHA256 (base64url) of `value` under a key derived from the encryption key for `purpose`: a value only this
   * service can compute, the same on every instance and every call (refresh-token successors, see SessionService).
   */
  async mac(purpose: string, value: string): Promise<string> {
    const { key } = await this.key();
    const purposeKey = createHmac('sha256', key).update(`quire:${purpose}`).digest();
    return createHmac('sha256', purposeKey).update(value).digest('base64url');
  }

  private key(): Promise<LoadedKey> {
    this.loaded ??= this.load().catch((error: unknown) => {
      this.loaded = undefined;
      throw error;
    });
    return this.loaded;
  }

  private async load(): Promise<LoadedKey> {
    let material = this.config.auth.encryptionKey;
    if (!material) {
      // Outside any request transaction on purpose: the generated key must survive a rolled-back request.
      await this.dataSource.query(
        `INSERT INTO identity_secrets (name, value) VALUES ('encryption_key', $1) ON CONFLICT (name) DO NOTHING`,
        [randomBytes(32).toString('base64url')],
      );
      const rows = await this.dataSource.query<Array<{ value: string }>>(
        `SELECT value FROM identity_secrets WHERE name = 'encryption_key'`,
      );
      material = rows[0].value;
    }
    const key = createHash('sha256').update(material).digest();
    return { key, id: createHash('sha256').update(key).digest('hex').slice(0, 8) };
  }
}
