import { Injectable } from '@nestjs/common';

export interface DocumentSource {
  /** The workspace whose documents of this type are served. */
  workspaceId: string;
  /** True when a data-source reference replaces the local data: the served documents are read-only here. */
  readOnly: boolean;
  /** The reference doing the replacement, if any. */
  referenceId: string | null;
}

/**
 * Data-source references (replacement mode, spec 2.3): which workspace serves a document type for a
 * given workspace. The documents module asks this for every read and write, so the rule lives here only.
 */
@Injectable()
export class DocumentSourceService {
  // Placeholder until data-source references land: every workspace serves its own documents.
  async resolve(workspaceId: string, _docType: string): Promise<DocumentSource> {
    return { workspaceId, readOnly: false, referenceId: null };
  }
}
