import { Module, type OnModuleInit } from '@nestjs/common';
import { DocumentsModule } from '../documents/documents.module.js';
import { BundleSections } from '../documents/services/bundle-sections.js';
import { MetadataChangeListeners } from '../documents/services/metadata-change-listeners.js';
import { ViewResolver } from '../documents/services/view-resolver.js';
import { ViewsController } from './controllers/views.controller.js';
import { ViewRepository } from './repositories/view.repository.js';
import { ViewsService } from './services/views.service.js';

/**
 * Views of documents (spec 2.7, docs/views.md). Plugs into the documents module at start-up: the view lookup of
 * `?viewId=` reads, the bundle's `views` section, and the merge's field-change hook.
 */
@Module({
  imports: [DocumentsModule],
  controllers: [ViewsController],
  providers: [ViewRepository, ViewsService],
})
export class ViewsModule implements OnModuleInit {
  constructor(
    private readonly views: ViewsService,
    private readonly resolver: ViewResolver,
    private readonly sections: BundleSections,
    private readonly metadataListeners: MetadataChangeListeners,
  ) {}

  onModuleInit(): void {
    this.resolver.use((document, viewId) => this.views.lookup(document, viewId));
    this.sections.register('views', (ctx) => this.views.bundleSection(ctx));
    this.metadataListeners.register((change) => this.views.fieldsChanged(change));
  }
}
