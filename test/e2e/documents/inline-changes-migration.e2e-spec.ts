import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../../src/config/app.config.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { adminQuery, undoMigrationsThrough, urlFor } from '../../utils/test-database.js';

/**
 * Migration 1732241200000 (docs/performance.md, "Sixth pass"): a request merged at once keeps its changes on the
 * request, `revision_operations` keeps no foreign keys. Undone, the inline changes become rows again in their
 * order and the keys come back; a deleted revision takes its operations with it either way.
 */
describe('migration: inline request changes', () => {
  const serverUrl = process.env.QUIRE_TEST_SERVER_URL as string;
  const name = `${process.env.QUIRE_TEST_RUN_PREFIX}_inline_${randomUUID().slice(0, 8)}`;
  let db: DataSource | undefined;

  afterAll(async () => {
    await db?.destroy();
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });

  async function seedDocument(
    q: DataSource,
  ): Promise<{ documentId: string; requestId: string; revisionId: string; changeIds: string[] }> {
    const [user] = await q.query<Array<{ id: string }>>(
      `INSERT INTO users (email, display_name) VALUES ($1, 'Inline') RETURNING id`,
      [`inline-${randomUUID().slice(0, 8)}@example.test`],
    );
    const [org] = await q.query<Array<{ id: string }>>(
      `INSERT INTO organizations (name, slug, type, owner_id, created_by) VALUES ('Inline', $2, 'team', $1, $1) RETURNING id`,
      [user?.id, `inline-${randomUUID().slice(0, 8)}`],
    );
    const [ws] = await q.query<Array<{ id: string }>>(
      `INSERT INTO workspaces (organization_id, name, slug, created_by) VALUES ($1, 'w', 'w', $2) RETURNING id`,
      [org?.id, user?.id],
    );
    const [doc] = await q.query<Array<{ id: string }>>(
      `INSERT INTO documents (organization_id, workspace_id, doc_type, doc_id, metadata, version, created_by)
       VALUES ($1, $2, 'table', $3, '{"fields": [], "properties": []}', 1, $4) RETURNING id`,
      [org?.id, ws?.id, `doc-${randomUUID().slice(0, 8)}`, user?.id],
    );
    const changeIds = [randomUUID(), randomUUID(), randomUUID()];
    const inline = changeIds.map((id, i) => ({
      id,
      type: 'row-create',
      operation: 'create',
      targetId: `r${i + 1}`,
      data: { values: { n: i + 1 } },
    }));
    const [req] = await q.query<Array<{ id: string }>>(
      `INSERT INTO requests (document_id, organization_id, workspace_id, title, author, implicit, status, change_count, inline_changes)
       VALUES ($1, $2, $3, 'Create rows', $4, true, 'merged', 3, $5::json) RETURNING id`,
      [doc?.id, org?.id, ws?.id, user?.id, JSON.stringify(inline)],
    );
    const [rev] = await q.query<Array<{ id: string }>>(
      `INSERT INTO revisions (document_id, organization_id, workspace_id, version, request_id, title, merged_by, operation_count)
       VALUES ($1, $2, $3, 1, $4, 'Create rows', $5, 3) RETURNING id`,
      [doc?.id, org?.id, ws?.id, req?.id, user?.id],
    );
    for (const ordinal of [1, 2, 3]) {
      await q.query(
        `INSERT INTO revision_operations (revision_id, document_id, ordinal, type, target, target_kind, target_row_id, new_value)
         VALUES ($1, $2, $3, 'row-create', $4::jsonb, 'row', $5, '{"values": {}, "version": 1}')`,
        [rev?.id, doc?.id, ordinal, JSON.stringify({ kind: 'row', rowId: `r${ordinal}` }), `r${ordinal}`],
      );
    }
    return {
      documentId: doc?.id as string,
      requestId: req?.id as string,
      revisionId: rev?.id as string,
      changeIds,
    };
  }

  const foreignKeys = `SELECT conname FROM pg_constraint WHERE conrelid = 'revision_operations'::regclass AND contype = 'f' ORDER BY conname`;
  const items = `SELECT id, seq::int AS seq, target_id AS "targetId", data FROM request_change_items WHERE request_id = $1 ORDER BY seq`;

  it('moves inline changes back into rows when undone, and deletes operations with their revisions', async () => {
    await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
    db = new DataSource(dataSourceOptions(loadConfig({}), urlFor(serverUrl, name)));
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });
    expect(await db.query(foreignKeys)).toEqual([]);
    const seeded = await seedDocument(db);

    const inline = await db.query<Array<{ id: string; seq: number; targetId: string; data: unknown }>>(
      items,
      [seeded.requestId],
    );
    expect(inline).toEqual(
      seeded.changeIds.map((id, i) => ({
        id,
        seq: i + 1,
        targetId: `r${i + 1}`,
        data: { values: { n: i + 1 } },
      })),
    );

    await undoMigrationsThrough(db, 'InlineRequestChanges1732241200000');
    const rows = await db.query<Array<{ id: string; target_id: string }>>(
      `SELECT id, target_id FROM request_changes WHERE request_id = $1 ORDER BY seq`,
      [seeded.requestId],
    );
    expect(rows).toEqual(seeded.changeIds.map((id, i) => ({ id, target_id: `r${i + 1}` })));
    expect(await db.query(foreignKeys)).toEqual([
      { conname: 'revision_operations_document_id_fkey' },
      { conname: 'revision_operations_revision_id_fkey' },
    ]);

    await db.runMigrations({ transaction: 'each' });
    expect((await db.query<Array<{ id: string }>>(items, [seeded.requestId])).map((item) => item.id)).toEqual(
      seeded.changeIds,
    );

    // Without foreign keys the trigger on revisions deletes their operations, as the cascade did.
    const other = await seedDocument(db);
    await db.query(`DELETE FROM documents WHERE id = $1`, [other.documentId]);
    const remaining = `SELECT revision_id AS "revisionId", count(*)::int AS n FROM revision_operations GROUP BY revision_id ORDER BY 1`;
    expect(await db.query(remaining)).toEqual([{ revisionId: seeded.revisionId, n: 3 }]);
  });
});
