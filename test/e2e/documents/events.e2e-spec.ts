import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle, newUser } from './documents.fixtures.js';

interface OutboxRow {
  event_type: string;
  organization_id: string;
  workspace_id: string;
  doc_type: string;
  doc_id: string;
  triggered_by: string;
  payload: Record<string, unknown>;
}

describe('documents: domain events', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner);
  });
  afterAll(async () => {
    await t.close();
  });

  async function eventsOf(requestId: string): Promise<OutboxRow[]> {
    return t.dataSource.query<OutboxRow[]>(`SELECT * FROM outbox WHERE doc_id = $1 AND payload->>'requestId' = $2 ORDER BY seq`, [doc.docId, requestId]);
  }

  it('raises request_created, request_merged, data_row_* and revision_created with the spec 6.2 payloads, in the write transaction', async () => {
    const created = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'e1', values: { name: 'Evt' } }).expect(201);
    const requestId = created.body.payload.request.requestId;
    const revisionId = created.body.payload.request.revisionId;
    const events = await eventsOf(requestId);
    expect(events.map((event) => event.event_type)).toEqual(['request_created', 'request_merged', 'data_row_created', 'revision_created']);
    for (const event of events) {
      expect(event).toMatchObject({ organization_id: owner.defaultOrganizationId, workspace_id: owner.defaultWorkspaceId, doc_type: doc.docType, triggered_by: owner.id });
    }
    const [requestCreated, merged, row, revision] = events.map((event) => event.payload);
    expect(requestCreated).toMatchObject({ requestId, title: 'Create row', author: owner.id });
    expect(merged).toEqual({ requestId, title: 'Create row', author: owner.id, mergedBy: owner.id, mergedAt: expect.any(String), revisionId, changesApplied: 1 });
    expect(row).toEqual({ requestId, revisionId, rowId: 'e1', version: 1, values: [{ fieldId: 'name', value: { text: 'Evt' } }] });
    expect(revision).toMatchObject({ revisionId, requestId, version: expect.any(Number), mergedBy: owner.id, stats: { rowsCreated: 1 } });

    const updated = await request(t.http).put(`${doc.path}/data/e1`).set(bearer(owner)).send({ values: { qty: 1 } }).expect(200);
    const updateEvents = await eventsOf(updated.body.payload.request.requestId);
    expect(updateEvents.find((event) => event.event_type === 'data_row_updated')?.payload).toMatchObject({ rowId: 'e1', version: 2 });
    const deleted = await request(t.http).delete(`${doc.path}/data/e1`).set(bearer(owner)).expect(200);
    const deleteEvents = await eventsOf(deleted.body.payload.request.requestId);
    expect(deleteEvents.find((event) => event.event_type === 'data_row_deleted')?.payload).toMatchObject({ rowId: 'e1' });
  });

  it('stamps the revision number and the merge time the commit gave: the events say what the API reads', async () => {
    const stamped = async (requestId: string): Promise<void> => {
      const events = await eventsOf(requestId);
      const merged = events.find((event) => event.event_type === 'request_merged')?.payload as Record<string, unknown>;
      const revision = events.find((event) => event.event_type === 'revision_created')?.payload as Record<string, unknown>;
      const readRequest = (await request(t.http).get(`${doc.path}/requests/${requestId}`).set(bearer(owner)).expect(200)).body.payload;
      const readRevision = (await request(t.http).get(`${doc.path}/revisions/${String(revision.revisionId)}`).set(bearer(owner)).expect(200)).body.payload;
      expect(merged.mergedAt).toBe(readRequest.mergedAt);
      expect(revision.version).toBe(readRevision.version);
      expect(revision.createdAt).toBe(readRevision.createdAt);
      expect(merged.mergedAt).toBe(revision.createdAt);
    };
    // A write merged at once (its request is inserted by the revision's statement)…
    const first = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ values: { name: 'Stamped' } }).expect(201);
    await stamped(first.body.payload.request.requestId);
    const second = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ values: { name: 'Next' } }).expect(201);
    await stamped(second.body.payload.request.requestId);
    // …and an explicit request merged later (its row is marked merged by that statement).
    const open = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: 'Explicit' }).expect(201);
    await request(t.http).post(`${doc.path}/data`).query({ requestId: open.body.payload.id }).set(bearer(owner)).send({ values: { name: 'Later' } }).expect(201);
    await request(t.http).post(`${doc.path}/requests/${open.body.payload.id}/merge`).set(bearer(owner)).expect(200);
    await stamped(open.body.payload.id);
    // Metadata events carry the same time.
    const metadata = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ ...metadata, fields: [...metadata.fields, { id: 'stamp_note', name: 'Note', type: 'text' }] })
      .expect(200);
    const [added] = await t.dataSource.query<OutboxRow[]>(
      `SELECT * FROM outbox WHERE doc_id = $1 AND event_type = 'metadata_field_added' ORDER BY seq DESC LIMIT 1`,
      [doc.docId],
    );
    const revisions = (await request(t.http).get(`${doc.path}/revisions`).set(bearer(owner)).expect(200)).body.payload;
    const latest = (revisions.items ?? revisions).find((item: { id: string }) => item.id === added?.payload.revisionId);
    expect(added?.payload.updatedAt).toBe(latest.createdAt);
  });

  it('raises request_closed and request_reopened; a failed write records no event', async () => {
    const open = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: 'Lifecycle' }).expect(201);
    const requestId = open.body.payload.id;
    await request(t.http).post(`${doc.path}/requests/${requestId}/close`).set(bearer(owner)).expect(200);
    await request(t.http).post(`${doc.path}/requests/${requestId}/reopen`).set(bearer(owner)).expect(200);
    expect((await eventsOf(requestId)).map((event) => event.event_type)).toEqual(['request_created', 'request_closed', 'request_reopened']);
    const [{ count: before }] = await t.dataSource.query(`SELECT count(*)::int AS count FROM outbox WHERE doc_id = $1`, [doc.docId]);
    await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ values: { price: 'x' } }).expect(400);
    const [{ count: after }] = await t.dataSource.query(`SELECT count(*)::int AS count FROM outbox WHERE doc_id = $1`, [doc.docId]);
    expect(after).toBe(before);
  });

  it('keeps revisions append-only in the database', async () => {
    await expect(t.dataSource.query(`UPDATE revisions SET title = 'rewritten'`)).rejects.toThrow(/append-only/);
    await expect(t.dataSource.query(`UPDATE revision_operations SET note = 'rewritten'`)).rejects.toThrow(/append-only/);
  });
});
