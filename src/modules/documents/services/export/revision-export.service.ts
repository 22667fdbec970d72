import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { TransactionHost } from '../../../../database/transaction-host.js';
import type { FieldDefinition, StoredRowValues, StoredValue, SystemColumn } from '../../fields/field.types.js';
import { handlerFor } from '../../fields/field-type.registry.js';
import { assertNever } from '../../../../common/assert-never.js';
import type { DocumentMetadata, DocumentSettings, RevisionRecord } from '../../domain/document.records.js';
import { renderValues, toOperationDto } from '../../mappers/document.mapper.js';
import { type LaterOperation, RevisionExportRepository, type RowAsOf } from '../../repositories/revision-export.repository.js';
import type { DocumentContext } from '../document-access.service.js';
import { RevisionHistoryService } from '../revision-history.service.js';
import { ComputedAccessService } from '../computed/computed-access.service.js';
import { cellOf, CONTENT_TYPES, type ExportFormat, type ExportSink, sinkFor } from './export-writers.js';
import { volatileFieldSql } from '../../query/formula-sql.js';
import { computedPlan, evaluatePropertyFormulas, hiddenPropertyFormulas, planPropertyFormulas, recomputeFormulas } from '../../fields/computed-row.evaluator.js';

/** Rows fetched from the cursor per batch. */
const BATCH = 2000;

export interface DocumentAsOf {
  metadata: DocumentMetadata;
  properties: StoredRowValues;
  settings: DocumentSettings;
}

type Json = { [key: string]: StoredValue };

function obj(value: StoredValue | null | undefined): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

function upsert(list: FieldDefinition[], field: FieldDefinition): FieldDefinition[] {
  return list.some((item) => item.id === field.id) ? list.map((item) => (item.id === field.id ? field : item)) : [...list, field];
}

function reorder(list: FieldDefinition[], ids: StoredValue | undefined): FieldDefinition[] {
  if (!Array.isArray(ids)) {
    return list;
  }
  const order = new Map(ids.map((id, index) => [String(id), index]));
  return [...list].sort((a, b) => (order.get(a.id) ?? Number.MAX_SAFE_INTEGER) - (order.get(b.id) ?? Number.MAX_SAFE_INTEGER));
}

/**
 * Metadata, properties and settings as they stood before `later` (pure): the later operations undone newest first,
 * so each target ends with the old value of the first operation after the revision.
 */
export function documentAsOf(current: DocumentAsOf, later: readonly LaterOperation[]): DocumentAsOf {
  let fields = [...current.metadata.fields];
  let properties = [...current.metadata.properties];
  let values: StoredRowValues = { ...current.properties };
  let settings = current.settings;
  for (const op of [...later].reverse()) {
    const old = obj(op.oldValue);
    const definition = obj(old.field) as unknown as FieldDefinition;
    const isProperty = op.kind === 'property';
    switch (op.type) {
      case 'field-create':
        if (isProperty) {
          properties = properties.filter((item) => item.id !== op.fieldId);
          delete values[op.fieldId ?? ''];
        } else {
          fields = fields.filter((item) => item.id !== op.fieldId);
        }
        break;
      case 'field-update':
      case 'field-delete':
        if (typeof definition.id === 'string') {
          if (isProperty) {
            properties = upsert(properties, definition);
            values = { ...values, [definition.id]: old.value ?? null };
          } else {
            fields = upsert(fields, definition);
          }
        }
        break;
      case 'metadata-update':
        fields = reorder(fields, old.fields);
        properties = reorder(properties, old.properties);
        break;
      case 'property-update':
        if (op.fieldId) {
          values = { ...values, [op.fieldId]: old.value ?? null };
        }
        break;
      case 'property-delete':
        values = { ...(obj(old.values) as StoredRowValues) };
        break;
      case 'settings-update':
        settings = old as DocumentSettings;
        break;
      default:
        break;
    }
  }
  const stripped: StoredRowValues = {};
  for (const [key, value] of Object.entries(values)) {
    if (value !== null) {
      stripped[key] = value;
    }
  }
  return { metadata: { fields, properties }, properties: stripped, settings };
}

/**
 * The metadata in the order of that time (`order`: the field and property ids as the metadata change in force then
 * listed them); definitions the order does not name keep their place after those it does. Without `order`, as is.
 */
export function inOrderOf(asOf: DocumentAsOf, order: { fields: string[]; properties: string[] } | null): DocumentAsOf {
  if (!order) {
    return asOf;
  }
  return { ...asOf, metadata: { fields: reorder(asOf.metadata.fields, order.fields), properties: reorder(asOf.metadata.properties, order.properties) } };
}

/** A row column of that time as a stored value (times as ISO UTC, users as ids); null when history does not tell. */
function systemColumnValue(row: RowAsOf, column: SystemColumn): StoredValue {
  switch (column) {
    case 'r.created_at':
      return row.createdAt ? new Date(row.createdAt).toISOString() : null;
    case 'r.updated_at':
      return row.updatedAt ? new Date(row.updatedAt).toISOString() : null;
    case 'r.created_by':
      return row.createdBy;
    case 'r.updated_by':
      return row.updatedBy;
    case 'r.id':
    case 'r.version':
      return null;
    default:
      return assertNever(column);
  }
}

function fileName(ctx: DocumentContext, revision: RevisionRecord, what: string, format: ExportFormat): string {
  const safe = (text: string): string => text.replace(/[^A-Za-z0-9_.-]/g, '_');
  return `${safe(ctx.document.docType)}-${safe(ctx.document.docId)}-v${revision.version}${what === 'changes' ? '-changes' : ''}.${format}`;
}

/**
 * `GET /revisions/{revId}/export` (docs/documents.md, "Point-in-time export"): the document as it stood at a
 * revision — metadata, properties and every row — reconstructed in SQL from the current rows and the operations
 * after it (RevisionExportRepository), or with `what=changes` the revision's operations; streamed in json, ndjson,
 * csv or xlsx inside one REPEATABLE READ transaction, batch by batch from a server-side cursor.
 */
@Injectable()
export class RevisionExportService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly history: RevisionHistoryService,
    private readonly exports: RevisionExportRepository,
    private readonly computedAccess: ComputedAccessService,
  ) {}

  async export(ctx: DocumentContext, revisionId: string, query: { format?: ExportFormat; what?: 'rows' | 'changes' }, res: Response): Promise<void> {
    const format = query.format ?? 'json';
    const what = query.what ?? 'rows';
    // An unknown revision is an ordinary error envelope: nothing has been written yet.
    const revision = await this.history.find(ctx, revisionId);
    const head = { docType: ctx.document.docType, docId: ctx.document.docId, revisionId: revision.id, version: revision.version, createdAt: revision.createdAt.toISOString() };
    // Headers are set (and the sink made: the xlsx writer starts writing at once) only when the first byte is about
    // to go: an error before that is an ordinary envelope.
    const start = (): ExportSink => {
      res.status(200);
      res.setHeader('Content-Type', CONTENT_TYPES[format]);
      res.setHeader('Content-Disposition', `attachment; filename="${fileName(ctx, revision, what, format)}"`);
      return sinkFor(format, res);
    };
    try {
      await this.stream(ctx, revision, what, head, start);
    } catch (error) {
      if (res.destroyed) {
        // The client went away (before the first byte or mid-stream): the transaction is released, nobody is left
        // to answer.
        return;
      }
      if (!res.headersSent) {
        throw error;
      }
      // Mid-stream: the status is gone; cut the response so the client sees an incomplete file, not a valid one.
      res.destroy();
      throw error;
    }
  }

  private async stream(
    ctx: DocumentContext,
    revision: RevisionRecord,
    what: 'rows' | 'changes',
    head: Record<string, unknown>,
    start: () => ExportSink,
  ): Promise<void> {
    await this.tx.run(async () => {
      if (what === 'changes') {
        const sink = start();
        const columns = ['ordinal', 'type', 'kind', 'rowId', 'fieldId', 'oldValue', 'newValue', 'operator', 'timestamp', 'note'];
        await sink.begin({ ...head, kind: 'changes', operationCount: revision.operationCount }, columns, 'changes');
        // Row values as the reader may see them (docs/formulas.md, "Access"), as GET /revisions/{revId}/operations.
        const mask = await this.computedAccess.historyMask(ctx);
        await this.exports.operations(revision.id, BATCH, (recorded) =>
          sink.records(
            recorded.map((item) => mask.operation(item)).map((op) => ({
              json: { ordinal: op.ordinal, ...toOperationDto(op, ctx.document.metadata) },
              cells: [op.ordinal, op.type, op.target.kind, op.target.rowId ?? null, op.target.fieldId ?? null, cellOf(op.oldValue), cellOf(op.newValue), op.operator, new Date(op.timestamp).toISOString(), op.note],
            })),
          ),
        );
        await sink.end();
        return;
      }
      const later = await this.exports.laterOperations(ctx.document.uuid, revision.version);
      const asOf = inOrderOf(
        documentAsOf({ metadata: ctx.document.metadata, properties: await this.exports.currentProperties(ctx.document.uuid), settings: ctx.document.settings }, later),
        // Fields changed later: the operations do not record where a field created or deleted stood, nor a move
        // made with other changes; the metadata change in force at the revision lists the order.
        later.some((op) => op.type.startsWith('field-')) ? await this.exports.metadataOrderAsOf(ctx.document.uuid, revision.version) : null,
      );
      // Without the fields whose values the reader may not see (lookups over documents they cannot read, and what
      // reads those; docs/formulas.md, "Access"), as a read of the rows leaves them out.
      const mask = await this.computedAccess.maskFor(ctx.document, ctx.principal.userId, { history: true, fields: asOf.metadata.fields });
      const fields = mask.fields(asOf.metadata.fields);
      const known = new Set(fields.map((field) => field.id));
      // Row columns shown as fields (created_time …): they live beside the values, not in them.
      const systemFields = fields.flatMap((field) => {
        const column = handlerFor(field.type).systemColumn;
        return column ? [{ id: field.id, column }] : [];
      });
      // Formulas as they stood: their stored values are today's (materialisation keeps no history).
      const plan = computedPlan(fields);
      const now = new Date();
      // Property formulas are never stored: worked out as GET /properties does, over the rows of that time.
      const propertyFormulas = planPropertyFormulas(asOf.metadata);
      const properties = propertyFormulas
        ? evaluatePropertyFormulas(
            propertyFormulas,
            asOf.properties,
            await this.exports.aggregatesAsOf(
              ctx.document.uuid,
              revision.version,
              propertyFormulas.aggregates.filter((aggregate) => !mask.hides(aggregate.fieldId)),
              volatileFieldSql(asOf.metadata.fields, propertyFormulas.aggregates.map((aggregate) => aggregate.fieldId)),
            ),
            now,
            hiddenPropertyFormulas(propertyFormulas, (fieldId) => mask.hides(fieldId)),
          )
        : asOf.properties;
      const sink = start();
      await sink.begin(
        { ...head, kind: 'document', metadata: asOf.metadata, properties: renderValues(properties, asOf.metadata.properties), settings: asOf.settings },
        ['id', ...fields.map((field) => field.id)],
        'rows',
      );
      await this.exports.rowsAsOf(ctx.document.uuid, revision.version, BATCH, (rows) =>
        sink.records(
          rows.map((row) => {
            let values: StoredRowValues = {};
            for (const [key, value] of Object.entries(row.values)) {
              if (known.has(key)) {
                values[key] = value;
              }
            }
            for (const { id, column } of systemFields) {
              const value = systemColumnValue(row, column);
              if (value !== null) {
                values[id] = value;
              }
            }
            if (plan.formulas.size > 0) {
              values = recomputeFormulas(plan, values, now, row);
            }
            return sink.tabular
              ? { json: null, cells: [row.id, ...fields.map((field) => cellOf(values[field.id]))] }
              : { json: { type: 'row', id: row.id, values: renderValues(values, fields) }, cells: [] };
          }),
        ),
      );
      await sink.end();
    }, 'REPEATABLE READ');
  }
}
