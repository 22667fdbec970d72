import type { Redis } from 'ioredis';

export interface RateLimitHit {
  /** Hits in the current window, this one included. */
  hits: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/** Counts hits per key in fixed windows. */
export abstract class RateLimitStore {
  abstract hit(key: string, windowMs: number): Promise<RateLimitHit>;

  /** Waits until the store can count (a shared store connects); never throws. */
  async ready(): Promise<void> {}

  async close(): Promise<void> {}
}

/** One process's budget: fine for a single instance and for tests. */
export class MemoryRateLimitStore extends RateLimitStore {
  private readonly windows = new Map<string, { hits: number; resetAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000);

  constructor() {
    super();
    this.sweeper.unref();
  }

  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { hits: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.hits += 1;
    return { hits: window.hits, resetMs: window.resetAt - now };
  }

  override async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) {
      if (window.resetAt <= now) {
        this.windows.delete(key);
      }
    }
  }
}

// INCR the key, set its expiry on the first hit, read the time left: one round trip, atomic in Redis.
const HIT_SCRIPT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {hits, redis.call('PTTL', KEYS[1])}
`;

/**
 * A budget shared by every instance through Redis (REDIS_URL). Commands are not queued while Redis is
 * unreachable: a hit then fails at once and the guard lets the request through uncounted.
 */
export class RedisRateLimitStore extends RateLimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'quire:rl:',
    private readonly onError: (error: Error) => void = () => undefined,
  ) {
    super();
    // Without a listener ioredis reports every failed reconnect as an unhandled error event.
    this.redis.on('error', (error: Error) => this.onError(error));
  }

  /** Resolves once connected, or after `timeoutMs` (ioredis keeps reconnecting in the background). */
  override async ready(timeoutMs = 2000): Promise<void> {
    if (this.redis.status === 'ready') {
      return;
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.redis.once('ready', done);
    });
  }

  async hit(key: string, windowMs: number): Promise<RateLimitHit> {
    const [hits, pttl] = (await this.redis.eval(HIT_SCRIPT, 1, this.prefix + key, String(windowMs))) as [
      number,
      number,
    ];
    return { hits, resetMs: pttl > 0 ? pttl : windowMs };
  }

  override async close(): Promise<void> {
    if (this.redis.status === 'ready') {
      await this.redis.quit();
    } else {
      this.redis.disconnect();
    }
  }
}
