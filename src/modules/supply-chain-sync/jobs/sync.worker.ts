import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
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
  private timer?: NodeJS.Timeout;
  private running?: Promise<SyncPassResult>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly propagation: PropagationService,
    private readonly connectors: ConnectorRunnerService,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.kick(), SYNC_POLL_INTERVAL_MS);
    this.timer.unref();
    this.kick();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  kick(): void {
    if (this.stopped) {
      return;
    }
    if (this.running) {
      this.again = true;
      return;
    }
    const pass = this.pass();
    this.running = pass;
    pass
      .catch((error: unknown) => {
        this.logger.error({ err: error }, 'sync pass failed');
        return undefined;
      })
      .finally(() => this.passEnded(pass));
  }

  /** Passes never overlap: a pass ending clears only itself, then runs what was asked for meanwhile. */
  private passEnded(pass: Promise<SyncPassResult>): void {
    if (this.running === pass) {
      this.running = undefined;
    }
    if (this.again && !this.stopped) {
      this.again = false;
      this.kick();
    }
  }

  /** Runs everything due now (waiting for a pass in progress first); what tests call after moving the clock. */
  async runDue(): Promise<SyncPassResult> {
    // Another pass may start while one is awaited (a kick in between): wait until none runs.
    while (this.running) {
      await this.running.catch(() => undefined);
    }
    const pass = this.pass();
    this.running = pass;
    try {
      return await pass;
    } finally {
      this.passEnded(pass);
    }
  }

  private async pass(): Promise<SyncPassResult> {
    const result: SyncPassResult = { bindings: [], connectorRuns: 0, scheduled: 0 };
    const lane = async (): Promise<void> => {
      while (!this.stopped && result.bindings.length < MAX_BINDINGS_PER_PASS) {
        const next = await this.propagation.runNext();
        if (next === null || next === 'busy') {
          return;
        }
        result.bindings.push(next);
      }
    };
    await Promise.all(Array.from({ length: SYNC_CONCURRENCY }, lane));
    result.scheduled = await this.connectors.enqueueDueSchedules();
    while (!this.stopped && (await this.connectors.runNextPending())) {
      result.connectorRuns += 1;
    }
    if (result.bindings.length >= MAX_BINDINGS_PER_PASS) {
      this.again = true;
    }
    return result;
  }
}
