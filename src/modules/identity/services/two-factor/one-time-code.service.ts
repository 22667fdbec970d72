import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../../database/transaction-host.js';
import type { NotificationChannel } from '../../../notifications/notification.entity.js';
import { NotifierService } from '../../../notifications/notifier.service.js';
import { hashToken, randomDigits, safeEqual } from '../secret-tokens.js';
import { returnedRows } from '../../../../database/sql-result.js';

export type CodePurpose = 'phone_login' | 'two_factor_login' | 'two_factor_enroll';

/** How long a code sent by SMS or e-mail stays valid. */
export const CODE_TTL_SECONDS = 5 * 60;
/** Wrong guesses a code survives; after that it is dead and a new one must be requested. */
export const CODE_MAX_ATTEMPTS = 5;

const MESSAGES: Record<CodePurpose, { kind: string; subject: string; text: (code: string) => string }> = {
  phone_login: {
    kind: 'login_code',
    subject: 'Your Quire sign-in code',
    text: (code) => `Your Quire sign-in code is ${code}. It expires in 5 minutes.`,
  },
  two_factor_login: {
    kind: 'two_factor_code',
    subject: 'Your Quire verification code',
    text: (code) => `Your Quire verification code is ${code}. It expires in 5 minutes.`,
  },
  two_factor_enroll: {
    kind: 'two_factor_enrollment',
    subject: 'Confirm two-step verification',
    text: (code) => `Enter ${code} to turn on two-step verification for Quire. It expires in 5 minutes.`,
  },
};

/**
 * Six-digit codes sent through the notifier (SMS or e-mail), stored hashed, single use, short lived. A new
 * code for the same purpose and recipient replaces the previous one.
 */
@Injectable()
export class OneTimeCodeService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly notifier: NotifierService,
  ) {}

  async issue(input: {
    purpose: CodePurpose;
    channel: NotificationChannel;
    recipient: string;
    userId: string | null;
  }): Promise<void> {
    const code = randomDigits(6);
    const message = MESSAGES[input.purpose];
    await this.tx.run(async () => {
      await this.tx.manager.query(
        `UPDATE one_time_codes SET consumed_at = now() WHERE purpose = $1 AND recipient = $2 AND consumed_at IS NULL`,
        [input.purpose, input.recipient],
      );
      await this.tx.manager.query(
        `INSERT INTO one_time_codes (purpose, recipient, user_id, code_hash, expires_at)
         VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
        [
          input.purpose,
          input.recipient,
          input.userId,
          this.hash(input.purpose, input.recipient, code),
          CODE_TTL_SECONDS,
        ],
      );
      await this.notifier.send({
        channel: input.channel,
        to: input.recipient,
        kind: message.kind,
        subject: message.subject,
        body: message.text(code),
        data: { code, purpose: input.purpose },
        userId: input.userId,
      });
    });
  }

  /**
   * Uses the current code for purpose + recipient. Returns the user id it was issued for (or '' when it was
   * issued for no account), or null when the code is wrong, expired, used or out of attempts.
   */
  async consume(purpose: CodePurpose, recipient: string, code: string): Promise<string | null> {
    return this.tx.run(async () => {
      const [current] = await this.tx.manager.query<
        Array<{ id: string; user_id: string | null; code_hash: string; attempts: number }>
      >(
        `SELECT id, user_id, code_hash, attempts FROM one_time_codes
          WHERE purpose = $1 AND recipient = $2 AND consumed_at IS NULL AND expires_at > now()
          ORDER BY created_at DESC LIMIT 1 FOR UPDATE`,
        [purpose, recipient],
      );
      if (!current || current.attempts >= CODE_MAX_ATTEMPTS) {
        return null;
      }
      if (!safeEqual(current.code_hash, this.hash(purpose, recipient, code.trim()))) {
        await this.tx.manager.query(`UPDATE one_time_codes SET attempts = attempts + 1 WHERE id = $1`, [
          current.id,
        ]);
        return null;
      }
      const used = returnedRows<{ id: string }>(
        await this.tx.manager.query(
          `UPDATE one_time_codes SET consumed_at = now() WHERE id = $1 AND consumed_at IS NULL RETURNING id`,
          [current.id],
        ),
      );
      return used.length > 0 ? (current.user_id ?? '') : null;
    });
  }

  private hash(purpose: CodePurpose, recipient: string, code: string): string {
    return hashToken(`${purpose}:${recipient.toLowerCase()}:${code}`);
  }
}
