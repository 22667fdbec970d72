import { Module, type OnModuleInit } from '@nestjs/common';
import { DocumentsModule } from '../documents/documents.module.js';
import { BundleSections } from '../documents/services/bundle-sections.js';
import { TenancyModule } from '../tenancy/tenancy.module.js';
import { CommentsController } from './controllers/comments.controller.js';
import { CommentRepository } from './repositories/comment.repository.js';
import { CommentEventsService } from './services/comment-events.service.js';
import { CommentsService } from './services/comments.service.js';

/** Comments on documents (docs/comments.md). Reaches documents only through what DocumentsModule exports. */
@Module({
  imports: [TenancyModule, DocumentsModule],
  controllers: [CommentsController],
  providers: [CommentRepository, CommentEventsService, CommentsService],
  exports: [CommentsService],
})
export class CommentsModule implements OnModuleInit {
  constructor(
    private readonly sections: BundleSections,
    private readonly comments: CommentsService,
  ) {}

  /** Plugs the bundle's `comments` section in without DocumentsModule importing this module (no cycle). */
  onModuleInit(): void {
    this.sections.register('comments', (ctx, query) => this.comments.listForBundle(ctx, query.commentsLimit));
  }
}
