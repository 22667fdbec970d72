import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { PassLoop } from '../../../common/jobs/pass-loop.js';
import { ConnectorRunnerService } from '../services/connector-runner.service.js';
import { type BindingRunResult, PropagationService } from '../services/propagation.service.js';

/** How often due work is looked for without a kick (batch windows, schedules, retries, a crashed instance's jobs). */
export const SYNC_POLL_INTERVAL_MS = 1000;
/** Bindings one pass applies at most before yielding. */
const MAX_BINDINGS_PER_PASS = 200;
/** Bindings applied at the same time by one instance (each in its own transaction and connection). */
export const SYNC_CONCURRENCY = 2;

export interface SyncPassResult {
  bindings: BindingRunResult[];
  connectorRuns: number;
  scheduled: number;
}

/**
 * Drives the sync work after commit, never in a request: propagation jobs (one binding per transaction), connector
 * runs and connector schedules. Runs when the revision listener kicks it, and every SYNC_POLL_INTERVAL_MS. Passes
 * never overlap within one instance; several instances share the work through `SKIP LOCKED` claims. Tests call
 * `runDue()` after moving SyncClock.
 */
@Injectable()
export class SyncWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SyncWorker.name);
  // A pass that reached its binding limit leaves more waiting: go again rather than wait for the next poll.
  private readonly loop = new PassLoop(
    () => this.pass(),
    (error) => this.logger.error({ err: error }, 'sync pass failed'),
    (result) => result.bindings.length >= MAX_BINDINGS_PER_PASS,
  );

  constructor(
    private readonly propagation: PropagationService,
    private readonly connectors: ConnectorRunnerService,
  ) {}

  onApplicationBootstrap(): void {
    this.loop.start(SYNC_POLL_INTERVAL_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  kick(): void {
    this.loop.kick();
  }

  /** Runs everything due now (waiting for a pass in progress first); what tests call after moving the clock. */
  runDue(): Promise<SyncPassResult> {
    return this.loop.runNow();
  }

  private async pass(): Promise<SyncPassResult> {
    const result: SyncPassResult = { bindings: [], connectorRuns: 0, scheduled: 0 };
    const lane = async (): Promise<void> => {
      while (!this.loop.stopping && result.bindings.length < MAX_BINDINGS_PER_PASS) {
        const next = await this.propagation.runNext();
        if (next === null || next === 'busy') {
          return;
        }
        result.bindings.push(next);
      }
    };
    await Promise.all(Array.from({ length: SYNC_CONCURRENCY }, lane));
    result.scheduled = await this.connectors.enqueueDueSchedules();
    while (!this.loop.stopping && (await this.connectors.runNextPending())) {
      result.connectorRuns += 1;
    }
    return result;
  }
}
