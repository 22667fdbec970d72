import { createHash } from 'node:crypto';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { FieldDefinition } from '../fields/field.types.js';
import { FIELD_ID_PATTERN } from '../fields/field-definition.validator.js';
import { handlerForField } from '../fields/field-type.registry.js';
import { isVolatileField, volatileFormulaIds } from '../fields/computed-definitions.js';
import type { QueryFamily } from '../fields/field-type-handler.js';
import type { FilterNode, QueryAst } from '../query/query.types.js';
import type { DocumentRecord } from '../domain/document.records.js';
import { FieldIndexRepository } from '../repositories/field-index.repository.js';

/** Documents smaller than this are served well by the (document_id, seq) index and the GIN index alone. */
export const INDEX_MIN_ROWS = 10_000;
/** Queries sorting or filtering by a field (per document, per process) before its index is built. */
export const INDEX_MIN_USES = 3;
/**
 * Families whose indexed value has a bounded size. Not `text`: a btree entry holds at most 2704 bytes, so a long
 * text value (the API accepts far longer ones) made every write of it fail once its field was indexed. Dates,
 * numbers, user ids and option ids (at most 255 characters) always fit.
 */
const INDEXED_FAMILIES: ReadonlySet<QueryFamily> = new Set(['number', 'date', 'datetime', 'id', 'select']);

/**
 * The SQL expression the query compiler uses for a field, with the field id as a literal and without the `r.`
 * alias, so that an index on it matches the compiled queries once PostgreSQL folds the bound field-id parameter
 * (custom plans). The sort expression when it needs no other parameter (numbers, dates, user ids), else the comparison
 * expression (select option ids). Null for types an expression index does not help.
 */
export function indexExpression(field: FieldDefinition): string | null {
  const handler = handlerForField(field);
  // A NOW()/TODAY() formula is computed at read time: no stored value to index.
  if (isVolatileField(field) || !FIELD_ID_PATTERN.test(field.id) || handler.systemColumn || !INDEXED_FAMILIES.has(handler.family)) {
    return null;
  }
  const ref = { kind: 'json' as const, key: `'${field.id}'` };
  let bound = false;
  const sort = handler.sortExpr(ref, field, () => {
    bound = true;
    return 'NULL';
  });
  const sql = bound ? handler.sqlExpr(ref).sql : sort.sql;
  return sql.replaceAll('r."values"', '"values"');
}

function fieldsOfFilter(node: FilterNode | null, into: string[]): string[] {
  if (node?.kind === 'condition') {
    into.push(node.field);
  } else if (node?.kind === 'group') {
    node.children.forEach((child) => fieldsOfFilter(child, into));
  }
  return into;
}

/**
 * Expression indexes on demand. A document of at least INDEX_MIN_ROWS rows whose field is sorted or filtered by
 * INDEX_MIN_USES queries gets a partial index `ON document_rows ((expr), seq) WHERE document_id = '<doc>'`, built
 * in the background with CREATE INDEX CONCURRENTLY (never in a request, never blocking writes). Indexes of deleted
 * or retyped fields are dropped after the merge commits; extended statistics on the expression give the planner
 * the selectivities it needs to use them. See docs/documents.md.
 */
@Injectable()
export class DocumentIndexService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DocumentIndexService.name);
  private readonly uses = new Map<string, number>();
  private readonly scheduled = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly indexes: FieldIndexRepository) {}

  /** Counts a query's sort and filter fields; schedules an index once a field is used often on a large document. */
  noteQuery(document: DocumentRecord, fields: readonly FieldDefinition[], ast: QueryAst): void {
    if (document.rowCount < INDEX_MIN_ROWS) {
      return;
    }
    const ids = new Set([...ast.sorts.map((sort) => sort.field), ...fieldsOfFilter(ast.filter, [])]);
    // Formulas computed at read time (NOW()/TODAY() and every formula reading one) have no stored value to index.
    const volatile = volatileFormulaIds(fields);
    for (const id of ids) {
      const field = fields.find((item) => item.id === id);
      const key = `${document.uuid}:${id}`;
      if (!field || volatile.has(id) || this.scheduled.has(key)) {
        continue;
      }
      const count = (this.uses.get(key) ?? 0) + 1;
      this.uses.set(key, count);
      if (count >= INDEX_MIN_USES) {
        this.scheduled.add(key);
        this.uses.delete(key);
        this.spawn(async () => {
          if (!(await this.ensure(document.uuid, field))) {
            // Failed (for example a deadlock with a build of another instance): let later queries try again.
            this.scheduled.delete(key);
          }
        });
      }
    }
  }

  /** Builds the index of a field unless it exists. */
  async ensure(documentUuid: string, field: FieldDefinition): Promise<string | null> {
    const expression = indexExpression(field);
    if (!expression) {
      return null;
    }
    const name = `dfx_${createHash('sha256').update(`${documentUuid}:${field.id}:${expression}`).digest('hex').slice(0, 24)}`;
    if (!(await this.indexes.claim(documentUuid, field.id, name, expression))) {
      return name;
    }
    try {
      await this.indexes.build(documentUuid, name, expression);
      this.logger.log({ documentUuid, fieldId: field.id, index: name }, 'expression index built');
      const statistics = `dfs_${createHash('sha256').update(expression).digest('hex').slice(0, 24)}`;
      await this.indexes.ensureStatistics(statistics, expression).catch((error: unknown) => {
        this.logger.warn({ err: error, statistics }, 'expression statistics not created');
      });
    } catch (error) {
      this.logger.warn({ err: error, documentUuid, fieldId: field.id }, 'expression index build failed');
      await this.indexes.drop(name).catch(() => undefined);
      return null;
    }
    return name;
  }

  /**
   * Drops, in the background, every recorded index that `ensure` would no longer build as it stands: its field is
   * gone, or its expression is not the field's current one (text fields, indexed by earlier versions, whose long
   * values then failed to write). Runs at every start, so indexes built before an upgrade stop costing writes.
   */
  onApplicationBootstrap(): void {
    this.spawn(async () => {
      const recorded = await this.indexes.listWithFields();
      for (const index of recorded) {
        if ((index.field ? indexExpression(index.field) : null) !== index.expression) {
          await this.indexes.drop(index.indexName);
          this.logger.log({ documentUuid: index.documentUuid, fieldId: index.fieldId, index: index.indexName }, 'unwanted expression index dropped');
        }
      }
    });
  }

  /** Drops the indexes of fields that were deleted or changed type (call after the merge committed). */
  forget(documentUuid: string, fieldIds: readonly string[]): void {
    if (fieldIds.length === 0) {
      return;
    }
    for (const id of fieldIds) {
      this.scheduled.delete(`${documentUuid}:${id}`);
    }
    this.spawn(async () => {
      const existing = await this.indexes.list(documentUuid);
      for (const index of existing.filter((item) => fieldIds.includes(item.fieldId))) {
        await this.indexes.drop(index.indexName);
      }
    });
  }

  /**
   * Runs index DDL one statement at a time: PostgreSQL runs one concurrent index build per table at a time, and
   * two concurrent expression-index builds wait for each other's transactions.
   */
  private spawn(work: () => Promise<unknown>): void {
    const task: Promise<void> = this.queue
      .then(work)
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'index maintenance failed'))
      .finally(() => this.running.delete(task));
    this.queue = task;
    this.running.add(task);
  }

  /** Lets background builds finish before the pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
