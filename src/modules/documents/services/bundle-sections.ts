import { Injectable } from '@nestjs/common';
import type { DocumentContext } from './document-access.service.js';

/** Bundle sections other modules fill (spec 4.4 `include`): views (views module), comments (comments module). */
export type ExtensionSection = 'views' | 'comments';

/** The bundle's query as a section provider sees it. */
export interface BundleSectionQuery {
  viewId?: string;
  commentsLimit?: number;
  requestId?: string;
}

/**
 * Fills one bundle section. Runs inside the bundle's one REPEATABLE READ, read-only transaction, so it must read
 * through TransactionHost.manager (which it does by default) to see the same snapshot as every other section.
 * `ctx.document` is the document as that snapshot has it.
 */
export type BundleSectionProvider = (ctx: DocumentContext, query: BundleSectionQuery) => Promise<unknown[]>;

/**
 * Where modules that own a bundle section register its provider (in their onModuleInit), so the documents module
 * builds the bundle without depending on them. A section nobody registered is an empty list.
 */
@Injectable()
export class BundleSections {
  private readonly providers = new Map<ExtensionSection, BundleSectionProvider>();

  register(section: ExtensionSection, provider: BundleSectionProvider): void {
    this.providers.set(section, provider);
  }

  async read(section: ExtensionSection, ctx: DocumentContext, query: BundleSectionQuery): Promise<unknown[]> {
    const provider = this.providers.get(section);
    return provider ? provider(ctx, query) : [];
  }
}
