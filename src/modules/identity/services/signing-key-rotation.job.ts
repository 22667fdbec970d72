import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { SigningKeyService } from './signing-key.service.js';

/** The signing key is replaced when it is older than this. */
export const SIGNING_KEY_MAX_AGE_DAYS = 90;

/** Checks hourly whether the signing key is due for rotation (every instance checks; one rotates). */
@Injectable()
export class SigningKeyRotationJob {
  private readonly logger = new Logger(SigningKeyRotationJob.name);

  constructor(private readonly keys: SigningKeyService) {}

  @Interval('signing-key-rotation', 60 * 60 * 1000)
  async check(): Promise<void> {
    try {
      if (await this.keys.rotateIfOlderThan(SIGNING_KEY_MAX_AGE_DAYS * 86_400)) {
        this.logger.log('rotated the token signing key');
      }
    } catch (error) {
      this.logger.error({ err: error }, 'signing key rotation check failed');
    }
  }
}
