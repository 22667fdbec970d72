import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { InvitationsService } from '../services/invitations.service.js';

/** Moves pending invitations past `expiresAt` to `expired` every minute (accept also checks on use). */
@Injectable()
export class InvitationExpiryJob {
  private readonly logger = new Logger(InvitationExpiryJob.name);

  constructor(private readonly invitations: InvitationsService) {}

  @Interval('tenancy.invitation-expiry', 60_000)
  async run(): Promise<number> {
    try {
      const expired = await this.invitations.expireDue();
      if (expired > 0) {
        this.logger.log({ expired }, 'invitations expired');
      }
      return expired;
    } catch (error) {
      this.logger.warn({ err: error }, 'invitation expiry pass failed');
      return 0;
    }
  }
}
