import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { SigningKeyService } from './signing-key.service.js';

/** The signing key is replaced when it is older than this. */
export const SIGNING_KEY_MAX_AGE_DAYS = 90;

/**
 * Checks at start-up and hourly whether the signing key is due for rotation (every instance checks; one rotates):
 * an instance restarted more often than hourly would otherwise never rotate.
 */
@Injectable()
export class SigningKeyRotationJob implements OnApplicationBootstrap {
  private readonly logger = new Logger(SigningKeyRotationJob.name);

  constructor(private readonly keys: SigningKeyService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.check();
  }

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
