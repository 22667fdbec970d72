import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import type { DataSource } from 'typeorm';
import { TokenService } from '../../../src/modules/identity/services/token.service.js';
import { FIRST_PARTY_CLIENT_ID } from '../../../src/modules/identity/services/token.service.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import type { TestApp } from '../../utils/test-app.js';

export { bearer };

export const API = '/api/v1';

/** Adds `user` to the organization of `owner`'s default workspace with a workspace role (directly in SQL). */
export async function addToWorkspace(
  dataSource: DataSource,
  owner: TestUser,
  user: TestUser,
  role: 'owner' | 'editor' | 'viewer',
  workspaceId = owner.defaultWorkspaceId,
): Promise<void> {
  await dataSource.query(
    `INSERT INTO organization_members (organization_id, user_id, role) VALUES ($1, $2, 'member') ON CONFLICT DO NOTHING`,
    [owner.defaultOrganizationId, user.id],
  );
  await dataSource.query(`INSERT INTO workspace_members (organization_id, workspace_id, user_id, role) VALUES ($1, $2, $3, $4)`, [
    owner.defaultOrganizationId,
    workspaceId,
    user.id,
    role,
  ]);
}

/** A second workspace in `owner`'s organization (directly in SQL). */
export async function addWorkspace(dataSource: DataSource, owner: TestUser, name = `ws-${randomUUID().slice(0, 6)}`): Promise<string> {
  const rows = await dataSource.query<{ id: string }[]>(
    `INSERT INTO workspaces (organization_id, name, slug, created_by) VALUES ($1, $2, $2, $3) RETURNING id`,
    [owner.defaultOrganizationId, name, owner.id],
  );
  return rows[0]?.id as string;
}

/** A token for `user` carrying only `scopes` (spec 5.8). */
export async function scopedToken(t: TestApp, user: TestUser, scopes: string[]): Promise<{ token: string }> {
  const issued = await t.app.get(TokenService).issueAccessToken({ userId: user.id, clientId: FIRST_PARTY_CLIENT_ID, scopes, sessionId: user.sessionId });
  return { token: issued.accessToken };
}

export const PRODUCT_FIELDS = [
  { id: 'name', name: 'Name', type: 'text', required: true },
  { id: 'sku', name: 'SKU', type: 'text', unique: true },
  { id: 'price', name: 'Price', type: 'number', validations: [{ ruleType: 'min', config: { min: 0 }, message: { en: 'Price must not be negative', de: 'Preis darf nicht negativ sein' } }] },
  { id: 'qty', name: 'Quantity', type: 'number' },
  { id: 'due', name: 'Due', type: 'date' },
  { id: 'active', name: 'Active', type: 'boolean' },
  {
    id: 'status',
    name: 'Status',
    type: 'single_select',
    selectOptions: [
      { id: 'todo', label: 'To do' },
      { id: 'doing', label: 'Doing' },
      { id: 'done', label: 'Done' },
    ],
  },
  {
    id: 'tags',
    name: 'Tags',
    type: 'multi_select',
    selectOptions: [
      { id: 'red', label: 'Red' },
      { id: 'blue', label: 'Blue' },
    ],
  },
  { id: 'rating', name: 'Rating', type: 'rating' },
  { id: 'owner', name: 'Owner', type: 'user' },
  { id: 'code', name: 'Code', type: 'text', validations: [{ ruleType: 'pattern', config: { pattern: '^[A-Z]{3}$' }, message: { en: 'Three capitals' } }] },
];

export interface DocHandle {
  docType: string;
  docId: string;
  path: string;
}

export async function createDocument(
  http: App,
  user: TestUser,
  overrides: { docType?: string; id?: string; fields?: unknown[]; properties?: unknown[]; settings?: Record<string, unknown>; workspaceId?: string } = {},
): Promise<DocHandle> {
  const docType = overrides.docType ?? 'products';
  const id = overrides.id ?? `doc-${randomUUID().slice(0, 8)}`;
  const res = await request(http)
    .post(`${API}/doc/${docType}`)
    .set(bearer(user))
    .send({
      id,
      organizationId: user.defaultOrganizationId,
      workspaceId: overrides.workspaceId ?? user.defaultWorkspaceId,
      title: 'Products',
      metadata: { fields: overrides.fields ?? PRODUCT_FIELDS, properties: overrides.properties ?? [] },
      ...(overrides.settings ? { settings: overrides.settings } : {}),
    });
  if (res.status !== 201) {
    throw new Error(`create document failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { docType, docId: id, path: `${API}/doc/${docType}/${id}` };
}

/** Removes one field from the document's metadata (`PUT /metadata` with the rest, merged at once). */
export async function removeField(http: App, user: { token: string }, doc: DocHandle, fieldId: string): Promise<void> {
  const metadata = (await request(http).get(`${doc.path}/metadata`).set(bearer(user)).expect(200)).body.payload;
  await request(http)
    .put(`${doc.path}/metadata`)
    .set(bearer(user))
    .send({ fields: metadata.fields.filter((field: { id: string }) => field.id !== fieldId) })
    .expect(200);
}

/** Creates a row (merged at once) and returns its payload. */
export async function createRow(http: App, user: { token: string }, doc: DocHandle, body: Record<string, unknown>): Promise<{ id: string; version: number }> {
  const res = await request(http).post(`${doc.path}/data`).set(bearer(user)).send(body);
  if (res.status !== 201) {
    throw new Error(`create row failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.payload;
}

/** Inserts `count` rows directly with SQL (fast seeding for query tests). */
export async function seedRows(dataSource: DataSource, doc: DocHandle, rows: Record<string, unknown>[]): Promise<void> {
  await dataSource.query(
    `WITH d AS (SELECT id FROM documents WHERE doc_type = $1 AND doc_id = $2 AND deleted_at IS NULL)
     INSERT INTO document_rows (document_id, id, "values", created_by, updated_by)
     SELECT d.id, x.id, x."values", 'seed', 'seed' FROM d, jsonb_to_recordset($3::jsonb) AS x(id text, "values" jsonb, ord integer) ORDER BY x.ord`,
    [doc.docType, doc.docId, JSON.stringify(rows.map((row, ord) => ({ id: row.id, values: row.values, ord })))],
  );
  await dataSource.query(`UPDATE documents SET row_count = row_count + $3 WHERE doc_type = $1 AND doc_id = $2 AND deleted_at IS NULL`, [
    doc.docType,
    doc.docId,
    rows.length,
  ]);
}

/**
 * Seeds `count` rows r000, r001, … named n{i} with qty i, then ANALYZE: a document past the exact-count threshold
 * whose filtered totals are the planner's estimate (count modes, paging past the end).
 */
export async function seedQtyRows(dataSource: DataSource, doc: DocHandle, count: number): Promise<void> {
  await seedRows(
    dataSource,
    doc,
    Array.from({ length: count }, (_, i) => ({ id: `r${String(i).padStart(3, '0')}`, values: { name: `n${i}`, qty: i } })),
  );
  await dataSource.query('ANALYZE document_rows');
}

export function valueOf(row: { values: { fieldId: string; value: Record<string, unknown> }[] }, fieldId: string): Record<string, unknown> | undefined {
  return row.values.find((entry) => entry.fieldId === fieldId)?.value;
}

export async function newUser(http: App): Promise<TestUser> {
  return registerUser(http);
}
