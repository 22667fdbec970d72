import { Module } from '@nestjs/common';
import { DocumentsModule } from '../documents/documents.module.js';
import { ApprovalsController } from './controllers/approvals.controller.js';
import { ApprovalRepository } from './repositories/approval.repository.js';
import { ApprovalEventsService } from './services/approval-events.service.js';
import { ApprovalsService } from './services/approvals.service.js';

/**
 * Approvals of change requests (spec 2.10, docs/approvals.md). Plugs into the documents module at start-up
 * (ApprovalsService.onModuleInit): the merge gate, and the hooks for changes appended to, closing and merging of a
 * request.
 */
@Module({
  imports: [DocumentsModule],
  controllers: [ApprovalsController],
  providers: [ApprovalRepository, ApprovalEventsService, ApprovalsService],
})
export class ApprovalsModule {}
