import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  bearer,
  createDocument,
  createRow,
  type DocHandle,
  newUser,
} from './documents.fixtures.js';

const FIELDS = [{ id: 'name', name: 'Name', type: 'text' }];
const PROPERTIES = [{ id: 'status', name: 'Status', type: 'text' }];

/** The envelope's `details`: one detail is rendered as an object, several as an array. */
function detailsOf(body: { details?: unknown }): { field?: string; reason?: string }[] {
  return [body.details ?? []].flat() as { field?: string; reason?: string }[];
}

describe('documents: deletions recorded in requests, and the paths of POST /requests failures', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    doc = await createDocument(t.http, owner, {
      fields: FIELDS,
      properties: PROPERTIES,
      settings: { permissions: { delete: ['role:owner'] } },
    });
    await createRow(t.http, owner, doc, { id: 'dd', values: { name: 'q' } });
    await request(t.http)
      .patch(`${doc.path}/properties`)
      .set(bearer(owner))
      .send({ properties: { status: 'on' } })
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
  });

  async function requestCount(): Promise<number> {
    return (await request(t.http).get(`${doc.path}/requests`).set(bearer(owner)).expect(200)).body.payload
      .total as number;
  }

  it('refuses a row-delete or property-delete change from a user permissions.delete leaves out, recording nothing', async () => {
    const before = await requestCount();
    for (const change of [
      { type: 'row-delete', target: { kind: 'row', rowId: 'dd' } },
      { type: 'property-delete', target: { kind: 'property' } },
    ]) {
      const res = await request(t.http)
        .post(`${doc.path}/requests`)
        .set(bearer(editor))
        .send({ changes: [change] })
        .expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
      expect(detailsOf(res.body)[0]?.reason).toContain('delete');
    }
    expect(await requestCount()).toBe(before);
    await request(t.http).get(`${doc.path}/data/dd`).set(bearer(editor)).expect(200);
    // Other changes from the same editor are recorded as before; the owner may record the deletion.
    await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(editor))
      .send({
        changes: [{ type: 'row-update', target: { kind: 'row', rowId: 'dd' }, newValue: { name: 'edited' } }],
      })
      .expect(201);
    await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'row-delete', target: { kind: 'row', rowId: 'dd' } }] })
      .expect(201);
  });

  it('refuses a revert that deletes rows (undoing their creation) to a user permissions.delete leaves out', async () => {
    const created = await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(editor))
      .send({ id: 'rv1', values: { name: 'q' } })
      .expect(201);
    const revisionId = created.body.payload.request.revisionId as string;
    const before = await requestCount();
    const res = await request(t.http)
      .post(`${doc.path}/revisions/${revisionId}/revert`)
      .set(bearer(editor))
      .expect(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(await requestCount()).toBe(before);
    await request(t.http).get(`${doc.path}/data/rv1`).set(bearer(editor)).expect(200);
    await request(t.http).post(`${doc.path}/revisions/${revisionId}/revert`).set(bearer(owner)).expect(200);
    await request(t.http).get(`${doc.path}/data/rv1`).set(bearer(editor)).expect(404);
  });

  it('names the failing change by its body path for an unknown row and an id already taken', async () => {
    const unknown = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(editor))
      .send({
        changes: [
          { type: 'row-create', target: { kind: 'row', rowId: 'ok1' }, newValue: { name: { text: 'q' } } },
          { type: 'row-update', target: { kind: 'row', rowId: 'nope' }, newValue: { name: { text: 'q' } } },
        ],
      })
      .expect(404);
    expect(detailsOf(unknown.body)).toEqual([expect.objectContaining({ field: 'changes[1].target.rowId' })]);

    const taken = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(editor))
      .send({
        changes: [
          { type: 'row-create', target: { kind: 'row', rowId: 'dd' }, newValue: { name: { text: 'q' } } },
        ],
      })
      .expect(409);
    expect(taken.body.code).toBe('ALREADY_EXISTS');
    expect(detailsOf(taken.body)).toEqual([expect.objectContaining({ field: 'changes[0].target.rowId' })]);

    const takenById = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(editor))
      .send({
        changes: [
          { type: 'row-create', target: { kind: 'row' }, newValue: { id: 'dd', values: { name: 'q' } } },
        ],
      })
      .expect(409);
    expect(detailsOf(takenById.body)).toEqual([expect.objectContaining({ field: 'changes[0].newValue.id' })]);

    const deleteUnknown = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'row-delete', target: { kind: 'row', rowId: 'nope' } }] })
      .expect(404);
    expect(detailsOf(deleteUnknown.body)).toEqual([
      expect.objectContaining({ field: 'changes[0].target.rowId' }),
    ]);
  });
});
