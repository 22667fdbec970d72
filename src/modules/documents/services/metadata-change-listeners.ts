import { Injectable } from '@nestjs/common';
import type { DocumentMetadata, DocumentRecord } from '../domain/document.records.js';

/** What a merge changed in a document's field definitions. */
export interface MetadataChange {
  /** The document before the merge (its `metadata` is the old one). */
  document: DocumentRecord;
  before: DocumentMetadata;
  after: DocumentMetadata;
  /** Ids of row fields the merge deleted. */
  deletedFieldIds: string[];
  /** Ids of row fields whose definition changed (type, options, flags). */
  updatedFieldIds: string[];
  revisionId: string;
  mergedBy: string;
}

/**
 * Runs inside the merge transaction, after the metadata was applied and before the revision row is written: what
 * a listener writes (and records in the outbox) commits or rolls back with the merge. A throwing listener fails the
 * merge.
 */
export type MetadataChangeListener = (change: MetadataChange) => Promise<void>;

/**
 * Modules that keep data referring to a document's fields (views) register here so a field change keeps them
 * valid in the same merge, without the documents module depending on them.
 */
@Injectable()
export class MetadataChangeListeners {
  private readonly listeners: MetadataChangeListener[] = [];

  register(listener: MetadataChangeListener): void {
    this.listeners.push(listener);
  }

  async notify(change: MetadataChange): Promise<void> {
    for (const listener of this.listeners) {
      await listener(change);
    }
  }
}
