import { type DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ScheduleModule } from '@nestjs/schedule';
import { LoggerModule } from 'nestjs-pino';
import { AuthGuard } from './common/auth/auth.guard.js';
import { RateLimitGuard } from './common/rate-limit/rate-limit.guard.js';
import { RateLimitModule } from './common/rate-limit/rate-limit.module.js';
import type { AppConfig } from './config/app.config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { ApprovalsModule } from './modules/approvals/approvals.module.js';
import { CommentsModule } from './modules/comments/comments.module.js';
import { DocumentsModule } from './modules/documents/documents.module.js';
import { EventsModule } from './modules/events/events.module.js';
import { HealthModule } from './modules/health/health.module.js';
import { IdentityModule } from './modules/identity/identity.module.js';
import { MetricsModule } from './modules/metrics/metrics.module.js';
import { NotificationsModule } from './modules/notifications/notifications.module.js';
import { TenancyModule } from './modules/tenancy/tenancy.module.js';
import { RealtimeModule } from './modules/realtime/realtime.module.js';
import { ViewsModule } from './modules/views/views.module.js';
import { WebhooksModule } from './modules/webhooks/webhooks.module.js';
import { SupplyChainModule } from './modules/supply-chain/supply-chain.module.js';
import { SupplyChainSyncModule } from './modules/supply-chain-sync/supply-chain-sync.module.js';
import { loggerOptions } from './common/logging/logger.options.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(loggerOptions(config)),
        DatabaseModule,
        EventEmitterModule.forRoot({ wildcard: true, delimiter: '.', maxListeners: 50 }),
        ScheduleModule.forRoot(),
        RateLimitModule,
        EventsModule,
        NotificationsModule,
        HealthModule,
        MetricsModule,
        IdentityModule,
        TenancyModule,
        DocumentsModule,
        ViewsModule,
        WebhooksModule,
        CommentsModule,
        RealtimeModule,
        ApprovalsModule,
        SupplyChainModule,
        SupplyChainSyncModule,
      ],
      // Order matters: authenticate first, so the rate limit can count per user rather than per address.
      providers: [
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
      ],
    };
  }
}
