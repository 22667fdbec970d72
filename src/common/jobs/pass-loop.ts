/**
 * Runs a worker's pass on demand (`kick`, right after a commit that left work) and every poll interval (work left
 * behind by a crash or by another instance). Passes never overlap within one instance: a kick during a pass runs
 * one more pass after it, and a pass that answers `true` (a full batch: more may be waiting) goes again at once
 * rather than waiting for the next poll. Several instances share the work through their own `SKIP LOCKED` claims.
 */
export class PassLoop<T = unknown> {
  private timer?: NodeJS.Timeout;
  private running?: Promise<T | undefined>;
  private again = false;
  private stopped = false;

  /**
   * @param pass one pass of the worker
   * @param onError logs a pass that failed (the next kick or poll tries again)
   * @param moreWaiting whether a pass's result means more work may be waiting
   */
  constructor(
    private readonly pass: () => Promise<T>,
    private readonly onError: (error: unknown) => void,
    private readonly moreWaiting: (result: T) => boolean = () => false,
  ) {}

  /** True once `stop()` was called: long passes check it between batches. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** A first pass now, then one every `intervalMs` (the timer does not keep the process alive). */
  start(intervalMs: number): void {
    this.kick();
    this.timer = setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
  }

  /** Asks for a pass soon. */
  kick(): void {
    if (this.stopped) {
      return;
    }
    if (this.running) {
      this.again = true;
      return;
    }
    this.track(this.pass());
  }

  /**
   * Runs a pass now and answers its result, after the pass in progress (what tests call after moving a clock).
   * Kicks meanwhile wait for it as for any pass.
   */
  async runNow(): Promise<T> {
    // Another pass may start while one is awaited (a kick in between): wait until none runs.
    while (this.running) {
      await this.running;
    }
    const pass = this.pass();
    this.track(pass);
    return pass;
  }

  /** No new passes; resolves when the pass in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private track(pass: Promise<T>): void {
    const tracked: Promise<T | undefined> = pass
      .then((result) => {
        this.again ||= this.moreWaiting(result);
        return result;
      })
      .catch((error: unknown) => {
        this.onError(error);
        return undefined;
      })
      .finally(() => {
        if (this.running === tracked) {
          this.running = undefined;
        }
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
    this.running = tracked;
  }
}
