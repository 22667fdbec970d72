import { Injectable, Logger } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { TransactionHost } from '../../../database/transaction-host.js';
import { TypeSettingsRepository } from '../repositories/type-settings.repository.js';

const BATCH = 1000;
const MAX_BATCHES_PER_PASS = 100;

/**
 * Enforces type-level `retention.closedRequestsDays` every hour: closed requests older than that are deleted with
 * their changes, in batches of 1000, each batch its own transaction. Several instances may run it at once: a
 * DELETE of rows another instance already deleted deletes nothing.
 */
@Injectable()
export class RequestRetentionJob {
  private readonly logger = new Logger(RequestRetentionJob.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly settings: TypeSettingsRepository,
  ) {}

  @Interval('documents.request-retention', 3_600_000)
  async run(): Promise<number> {
    let total = 0;
    try {
      for (let pass = 0; pass < MAX_BATCHES_PER_PASS; pass += 1) {
        const deleted = await this.tx.run(() => this.settings.deleteExpiredClosedRequests(BATCH));
        total += deleted;
        if (deleted < BATCH) {
          break;
        }
      }
      if (total > 0) {
        this.logger.log({ deleted: total }, 'closed requests past their retention deleted');
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'request retention pass failed');
    }
    return total;
  }
}
