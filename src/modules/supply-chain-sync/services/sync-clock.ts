import { Injectable } from '@nestjs/common';

/**
 * The clock of propagation batch windows and connector schedules. Real time by default; tests move it
 * (`set`, `advance`) and then run the due work (PropagationWorker.runDue, ConnectorScheduler.runDue) without sleeping.
 */
@Injectable()
export class SyncClock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  /** Moves the clock forward (or back) by `ms`. */
  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Makes `now()` answer `date` at this moment (time keeps running from there). */
  set(date: Date): void {
    this.offsetMs = date.getTime() - Date.now();
  }

  reset(): void {
    this.offsetMs = 0;
  }
}
