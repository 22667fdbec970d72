import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { FieldDefinition } from '../fields/field.types.js';

export interface FieldIndexRecord {
  fieldId: string;
  indexName: string;
  expression: string;
  status: 'building' | 'ready' | 'failed';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INDEX_NAME = /^dfx_[0-9a-f]{24}$/;

/**
 * DDL and bookkeeping for the per-document expression indexes. Runs on the pool directly, never inside a unit of
 * work: `CREATE/DROP INDEX CONCURRENTLY` cannot run in a transaction. The expression comes from the field-type
 * handler with the field id as a literal (ids match ^[A-Za-z0-9_-]{1,64}$); the document id is checked as a uuid.
 */
@Injectable()
export class FieldIndexRepository {
  constructor(private readonly dataSource: DataSource) {}

  async list(documentUuid: string): Promise<FieldIndexRecord[]> {
    return this.dataSource.query<FieldIndexRecord[]>(
      `SELECT field_id AS "fieldId", index_name AS "indexName", expression, status FROM document_field_indexes WHERE document_id = $1`,
      [documentUuid],
    );
  }

  /**
   * Every recorded index with the current definition of its field (null when the field is gone), for the start-up
   * pass that drops the indexes the service no longer builds.
   */
  async listWithFields(): Promise<(FieldIndexRecord & { documentUuid: string; field: FieldDefinition | null })[]> {
    return this.dataSource.query(
      `SELECT i.document_id AS "documentUuid", i.field_id AS "fieldId", i.index_name AS "indexName", i.expression, i.status,
              (SELECT f FROM jsonb_array_elements(d.metadata -> 'fields') AS f WHERE f ->> 'id' = i.field_id LIMIT 1) AS field
         FROM document_field_indexes i JOIN documents d ON d.id = i.document_id`,
    );
  }

  /** Claims the index of a field; false when one is already recorded. */
  async claim(documentUuid: string, fieldId: string, indexName: string, expression: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `INSERT INTO document_field_indexes (document_id, field_id, index_name, expression) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [documentUuid, fieldId, indexName, expression],
    );
    return rows.length > 0;
  }

  async build(documentUuid: string, indexName: string, expression: string): Promise<void> {
    if (!UUID.test(documentUuid) || !INDEX_NAME.test(indexName)) {
      throw new Error('refusing to build an index from unchecked names');
    }
    await this.dataSource.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${indexName} ON document_rows ((${expression}), seq) WHERE document_id = '${documentUuid}'::uuid`,
    );
    await this.dataSource.query(`UPDATE document_field_indexes SET status = 'ready' WHERE index_name = $1`, [indexName]);
  }

  /**
   * Statistics on the expression (PostgreSQL 14+). The planner ignores the statistics of partial indexes, so
   * without these it guesses 0.5 % for any range or equality on a JSON field and picks bitmap scans plus sorts
   * over a large part of the document instead of walking the index in order. Shared by every document using the
   * same field id and type; refreshed by ANALYZE (run now, then by autovacuum).
   */
  async ensureStatistics(statisticsName: string, expression: string): Promise<void> {
    if (!/^dfs_[0-9a-f]{24}$/.test(statisticsName)) {
      throw new Error('refusing to create statistics from unchecked names');
    }
    await this.dataSource.query(`CREATE STATISTICS IF NOT EXISTS ${statisticsName} ON ((${expression})) FROM document_rows`);
    await this.dataSource.query(`ANALYZE document_rows`);
  }

  async markFailed(indexName: string): Promise<void> {
    await this.dataSource.query(`UPDATE document_field_indexes SET status = 'failed' WHERE index_name = $1`, [indexName]);
  }

  /** Drops the index (an interrupted concurrent build leaves an invalid one) and forgets it. */
  async drop(indexName: string): Promise<void> {
    if (!INDEX_NAME.test(indexName)) {
      return;
    }
    await this.dataSource.query(`DROP INDEX CONCURRENTLY IF EXISTS ${indexName}`);
    await this.dataSource.query(`DELETE FROM document_field_indexes WHERE index_name = $1`, [indexName]);
  }
}
