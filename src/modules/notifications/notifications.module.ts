import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NotificationEntity } from './notification.entity.js';
import { NotifierService } from './notifier.service.js';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([NotificationEntity])],
  providers: [NotifierService],
  exports: [NotifierService],
})
export class NotificationsModule {}
