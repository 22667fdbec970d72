import {
  Global,
  Inject,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../../config/app.config.js';
import { MemoryRateLimitStore, RateLimitStore, RedisRateLimitStore } from './rate-limit.store.js';
import { RateLimiter } from './rate-limiter.service.js';

@Global()
@Module({
  providers: [
    RateLimiter,
    {
      provide: RateLimitStore,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): RateLimitStore => {
        if (!config.redisUrl) {
          return new MemoryRateLimitStore();
        }
        const logger = new Logger('RateLimitStore');
        let lastWarning = 0;
        return new RedisRateLimitStore(
          new Redis(config.redisUrl, {
            maxRetriesPerRequest: 1,
            enableOfflineQueue: false,
            connectTimeout: 2000,
            // Otherwise closing while Redis is down leaves a 2 s timer behind (the socket is already gone).
            disconnectTimeout: 200,
          }),
          'quire:rl:',
          (error) => {
            if (Date.now() - lastWarning > 60_000) {
              lastWarning = Date.now();
              logger.warn(
                `Redis unavailable (${error.message}); requests are not rate limited until it is back`,
              );
            }
          },
        );
      },
    },
  ],
  exports: [RateLimitStore, RateLimiter],
})
export class RateLimitModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(RateLimitStore) private readonly store: RateLimitStore) {}

  /** Wait for Redis before serving, so the first requests are counted too. */
  async onModuleInit(): Promise<void> {
    await this.store.ready();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
