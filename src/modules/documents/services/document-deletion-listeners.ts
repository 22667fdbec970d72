import { Injectable } from '@nestjs/common';
import type { DocumentRecord } from '../domain/document.records.js';

/**
 * Runs inside the transaction that soft-deletes a document (`DELETE /doc/{docType}/{docId}`): what a listener
 * writes commits or rolls back with the deletion. A throwing listener fails it.
 */
export type DocumentDeletionListener = (document: DocumentRecord, deletedBy: string) => Promise<void>;

/**
 * Modules that keep records built on a document (supply-chain catalogs and order books) register here to retire
 * them with it, without reading the documents module's tables or the documents module depending on them.
 */
@Injectable()
export class DocumentDeletionListeners {
  private readonly listeners: DocumentDeletionListener[] = [];

  register(listener: DocumentDeletionListener): void {
    this.listeners.push(listener);
  }

  async notify(document: DocumentRecord, deletedBy: string): Promise<void> {
    for (const listener of this.listeners) {
      await listener(document, deletedBy);
    }
  }
}
