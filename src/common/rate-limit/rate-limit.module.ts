import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../../config/app.config.js';
import { MemoryRateLimitStore, RateLimitStore, RedisRateLimitStore } from './rate-limit.store.js';

@Global()
@Module({
  providers: [
    {
      provide: RateLimitStore,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): RateLimitStore =>
        config.redisUrl
          ? new RedisRateLimitStore(new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false }))
          : new MemoryRateLimitStore(),
    },
  ],
  exports: [RateLimitStore],
})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(@Inject(RateLimitStore) private readonly store: RateLimitStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
