import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MailDeliveryJob } from './mail-delivery.job.js';
import { NotificationEntity } from './notification.entity.js';
import { NotificationRepository } from './notification.repository.js';
import { NotifierService } from './notifier.service.js';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([NotificationEntity])],
  providers: [NotifierService, NotificationRepository, MailDeliveryJob],
  exports: [NotifierService],
})
export class NotificationsModule {}
