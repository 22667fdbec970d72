import { Injectable } from '@nestjs/common';
import { documentEvent, type NewDomainEvent } from '../../events/domain-event.js';
import { OutboxService } from '../../events/outbox.service.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { rowToValueEntries } from '../fields/field-type.registry.js';
import type { FoldedChanges } from '../domain/change-fold.js';
import type { DocumentRecord, RequestRecord, RevisionStats, RowRecord } from '../domain/document.records.js';
import type { ConversionReport } from '../domain/merge.types.js';
import type { MetadataPlan } from './merge/metadata-merge.service.js';
import { fieldSummary } from './merge/metadata-merge.service.js';
import type { RowMergeResult } from './merge/row-merge.service.js';

const MAX_BULK_ROW_IDS = 1000;
/**
 * A bulk write of at most this many rows carries each row as committed in its event (`rows`); a larger one carries
 * `rows: null` and its row ids (docs/webhooks.md): a thousand rows' values would make every delivery and stream
 * message of it hundreds of kilobytes, and the outbox insert part of the bulk write's own cost (issue 15).
 */
export const MAX_BULK_EVENT_ROWS = 100;

/** A row of a `data_bulk_operation` payload: the committed state (a deleted row: its last version, `deleted`). */
type BulkEventRow =
  | { rowId: string; version: number; values: ReturnType<typeof rowToValueEntries> }
  | { rowId: string; version: number; deleted: true };

interface BulkEventFacts {
  rowsCreated: number;
  rowsUpdated: number;
  rowsDeleted: number;
  rowIds: string[];
  rows: BulkEventRow[];
}

/** What a merge's events say, all known before its revision is numbered. */
export interface MergeFacts {
  request: RequestRecord;
  revisionId: string;
  mergedBy: string;
  stats: RevisionStats;
  rows: RowMergeResult;
  conversions: ConversionReport[];
  changesApplied: number;
}

/**
 * Builds the document events of spec 6.2 and records them in the outbox, inside the transaction of the change.
 * Payloads: request events `{requestId, title, author}` (+ `mergedBy, mergedAt, revisionId, changesApplied` on
 * merge); metadata events `{field{id,name,type,required,defaultValue}, updatedBy, updatedAt}`; data events
 * `{rowId, values, version, requestId, revisionId}`; `data_bulk_operation` `{bulkId, requestId, revisionId,
 * rowsCreated, rowsUpdated, rowsDeleted, rowIds, rows}` (`rows`: null past MAX_BULK_EVENT_ROWS); `revision_created` `{revisionId, version, requestId, title,
 * mergedBy, stats, createdAt}`.
 */
@Injectable()
export class DocumentEventsService {
  constructor(private readonly outbox: OutboxService) {}

  async request(document: DocumentRecord, event: 'request_created' | 'request_closed' | 'request_reopened', request: RequestRecord, by: string): Promise<void> {
    await this.outbox.record(this.requestEvent(document, event, request, by));
  }

  /** A request event to record later, together with others (a write merged at once records everything in one insert). */
  requestEvent(document: DocumentRecord, event: 'request_created' | 'request_closed' | 'request_reopened', request: RequestRecord, by: string): NewDomainEvent {
    return documentEvent(document, event, by, { requestId: request.id, title: request.title, author: request.author, status: request.status });
  }

  /**
   * The events of a merge as the parameter of the statement that numbers its revision and records them
   * (RevisionRepository.commit): the revision's number and the merge's time are set there (`commitStamps`),
   * everything else is known before. `prelude`: events of the same write to record first (request_created).
   */
  mergedStatementEvents(
    document: DocumentRecord,
    merge: MergeFacts,
    metadata: MetadataPlan | null,
    fields: readonly FieldDefinition[],
    folded: FoldedChanges,
    prelude: readonly NewDomainEvent[] = [],
  ): string {
    const { request, revisionId, mergedBy: by } = merge;
    const atMerge = { updatedAt: 'committedAt' } as const;
    const events: NewDomainEvent[] = [...prelude];
    events.push({
      ...documentEvent(document, 'request_merged', by, {
        requestId: request.id,
        title: request.title,
        author: request.author,
        mergedBy: by,
        mergedAt: null,
        revisionId,
        changesApplied: merge.changesApplied,
      }),
      commitStamps: { mergedAt: 'committedAt' },
    });
    if (metadata) {
      // Spec 6.2 gives the metadata events a `field`: on the whole update it is the first field or property the
      // update changed (created, then updated, then deleted; fields before properties), null only when it changed
      // none. `fields` and `properties` say everything, and each changed field has its own metadata_field_* event.
      const changed = [metadata.fields, metadata.properties].flatMap((diff) => [
        ...diff.created,
        ...diff.updated.map((update) => update.after),
        ...diff.deleted,
      ]);
      events.push({
        ...documentEvent(document, 'metadata_updated', by, {
          field: changed[0] ? fieldSummary(changed[0]) : null,
          fields: metadata.metadata.fields.map(fieldSummary),
          properties: metadata.metadata.properties.map(fieldSummary),
          conversions: merge.conversions,
          revisionId,
          updatedBy: by,
          updatedAt: null,
        }),
        commitStamps: atMerge,
      });
      const fieldEvent = (name: string, field: FieldDefinition): NewDomainEvent => ({
        ...documentEvent(document, name, by, { field: fieldSummary(field), revisionId, updatedBy: by, updatedAt: null }),
        commitStamps: atMerge,
      });
      for (const diff of [metadata.fields, metadata.properties]) {
        events.push(...diff.created.map((field) => fieldEvent('metadata_field_added', field)));
        events.push(...diff.updated.map((update) => fieldEvent('metadata_field_updated', update.after)));
        events.push(...diff.deleted.map((field) => fieldEvent('metadata_field_deleted', field)));
      }
    }
    events.push(...this.dataEvents(document, merge, fields, folded, by));
    events.push({
      ...documentEvent(document, 'revision_created', by, {
        revisionId,
        version: null,
        requestId: request.id,
        title: request.title,
        mergedBy: by,
        stats: merge.stats,
        createdAt: null,
      }),
      commitStamps: { version: 'revisionVersion', createdAt: 'committedAt' },
    });
    return this.outbox.statementEvents(events).json;
  }

  /** One event per row written by single-row writes; one `data_bulk_operation` per bulk write. */
  private dataEvents(document: DocumentRecord, result: MergeFacts, fields: readonly FieldDefinition[], folded: FoldedChanges, by: string): NewDomainEvent[] {
    const events: NewDomainEvent[] = [];
    const bulks = new Map<string, BulkEventFacts>();
    const base = { requestId: result.request.id, revisionId: result.revisionId };
    const valuesOf = (row: RowRecord): ReturnType<typeof rowToValueEntries> => rowToValueEntries(row.values, [...fields], row);
    const handle = (row: RowRecord, kind: 'created' | 'updated' | 'deleted'): void => {
      const origin = folded.rows.get(row.id)?.origins[0] ?? 'single';
      if (origin !== 'single') {
        const bulk = bulks.get(origin) ?? { rowsCreated: 0, rowsUpdated: 0, rowsDeleted: 0, rowIds: [], rows: [] };
        bulk[kind === 'created' ? 'rowsCreated' : kind === 'updated' ? 'rowsUpdated' : 'rowsDeleted'] += 1;
        if (bulk.rowIds.length < MAX_BULK_ROW_IDS) {
          bulk.rowIds.push(row.id);
        }
        // Past the limit the event carries no rows at all (below): the values are worked out only while they may be sent.
        if (bulk.rows.length <= MAX_BULK_EVENT_ROWS) {
          bulk.rows.push(kind === 'deleted' ? { rowId: row.id, version: row.version, deleted: true } : { rowId: row.id, version: row.version, values: valuesOf(row) });
        }
        bulks.set(origin, bulk);
        return;
      }
      const payload =
        kind === 'deleted'
          ? { ...base, rowId: row.id, version: row.version }
          : { ...base, rowId: row.id, version: row.version, values: valuesOf(row) };
      events.push(documentEvent(document, `data_row_${kind}`, by, payload));
    };
    result.rows.created.forEach((row) => handle(row, 'created'));
    result.rows.updated.forEach((row) => handle(row, 'updated'));
    result.rows.deleted.forEach((row) => handle(row, 'deleted'));
    const propertiesBulk = folded.properties?.bulkId;
    if (propertiesBulk && !bulks.has(propertiesBulk)) {
      bulks.set(propertiesBulk, { rowsCreated: 0, rowsUpdated: 0, rowsDeleted: 0, rowIds: [], rows: [] });
    }
    for (const [bulkId, facts] of bulks) {
      const rows = facts.rows.length > MAX_BULK_EVENT_ROWS ? null : facts.rows;
      events.push(documentEvent(document, 'data_bulk_operation', by, { ...base, bulkId, ...facts, rows, propertiesUpdated: propertiesBulk === bulkId }));
    }
    return events;
  }
}
