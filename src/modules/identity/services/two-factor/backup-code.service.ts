import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../../database/transaction-host.js';
import { hashToken, randomBackupCode } from '../secret-tokens.js';
import { returnedRows } from '../../../../database/sql-result.js';

export const BACKUP_CODE_COUNT = 10;

/** One-time backup codes for when the second factor is not at hand. Shown once, stored hashed. */
@Injectable()
export class BackupCodeService {
  constructor(private readonly tx: TransactionHost) {}

  /** Replaces the user's backup codes with a fresh set and returns them (the only time they are readable). */
  async regenerate(userId: string): Promise<string[]> {
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, () => randomBackupCode());
    await this.tx.run(async () => {
      await this.tx.manager.query(`DELETE FROM backup_codes WHERE user_id = $1`, [userId]);
      await this.tx.manager.query(`INSERT INTO backup_codes (user_id, code_hash) SELECT $1, unnest($2::text[])`, [
        userId,
        codes.map((code) => this.hash(userId, code)),
      ]);
    });
    return codes;
  }

  /** Uses up one backup code; false when it is unknown or already used. */
  async consume(userId: string, code: string): Promise<boolean> {
    const used = returnedRows<{ id: string }>(
      await this.tx.manager.query(
        `UPDATE backup_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING id`,
        [userId, this.hash(userId, code)],
      ),
    );
    return used.length > 0;
  }

  async removeAll(userId: string): Promise<void> {
    await this.tx.manager.query(`DELETE FROM backup_codes WHERE user_id = $1`, [userId]);
  }

  /** Codes are compared case-insensitively and without the dash. */
  private hash(userId: string, code: string): string {
    return hashToken(`${userId}:${code.toLowerCase().replace(/[^a-z0-9]/g, '')}`);
  }
}
