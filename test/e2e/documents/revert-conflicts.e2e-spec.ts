import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, type DocHandle, newUser } from './documents.fixtures.js';

const FIELDS = [{ id: 'name', name: 'Name', type: 'text' }];
const PROPERTIES = [
  { id: 'status', name: 'Status', type: 'text' },
  { id: 'note', name: 'Note', type: 'text' },
];

/**
 * Reverting settings and property revisions undoes only what the revision changed, and conflicts (409 CONFLICT,
 * payload {requestId, conflicts}) when that changed again since, as rows do (docs/documents.md, "Revision diff,
 * history, revert").
 */
describe('documents: reverting settings and properties', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
  });
  afterAll(async () => {
    await t.close();
  });

  async function lastRevision(doc: DocHandle): Promise<string> {
    const res = await request(t.http).get(`${doc.path}/revisions?pageSize=1`).set(bearer(owner)).expect(200);
    return res.body.payload.items[0].id as string;
  }

  async function settings(doc: DocHandle): Promise<Record<string, unknown>> {
    return (await request(t.http).get(`${doc.path}/settings`).set(bearer(owner)).expect(200)).body.payload;
  }

  async function putSettings(doc: DocHandle, body: Record<string, unknown>): Promise<string> {
    await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send(body).expect(200);
    return lastRevision(doc);
  }

  async function patchProperties(
    doc: DocHandle,
    user: TestUser,
    properties: Record<string, unknown>,
  ): Promise<string> {
    await request(t.http).patch(`${doc.path}/properties`).set(bearer(user)).send({ properties }).expect(200);
    return lastRevision(doc);
  }

  async function properties(doc: DocHandle): Promise<unknown> {
    return (await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200)).body.payload
      .properties;
  }

  it('undoes only the settings a revision changed: a later permissions.view restriction stays', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS });
    const s1 = await putSettings(doc, { notifications: { onMerge: true } });
    await putSettings(doc, { notifications: { onMerge: true }, permissions: { view: ['role:editor'] } });

    const res = await request(t.http)
      .post(`${doc.path}/revisions/${s1}/revert`)
      .set(bearer(owner))
      .expect(200);
    expect(res.body.payload.merged).toBe(true);
    const after = await settings(doc);
    expect(after).toMatchObject({ permissions: { view: ['role:editor'] } });
    expect((after.notifications as Record<string, unknown>).onMerge).toBeUndefined();
  });

  it('answers 409 CONFLICT (settings-changed) when what the settings revision changed was changed again, and applies nothing', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS });
    const s1 = await putSettings(doc, { permissions: { view: ['role:editor'] } });
    await putSettings(doc, { permissions: { view: ['role:owner'] } });

    const res = await request(t.http)
      .post(`${doc.path}/revisions/${s1}/revert`)
      .set(bearer(owner))
      .expect(409);
    expect(res.body.code).toBe('CONFLICT');
    expect(res.body.payload).toMatchObject({
      requestId: expect.any(String),
      conflicts: [
        expect.objectContaining({
          type: 'settings-changed',
          targetId: 'settings',
          fieldId: 'permissions.view',
        }),
      ],
    });
    expect(await settings(doc)).toMatchObject({ permissions: { view: ['role:owner'] } });
  });

  it('answers 409 CONFLICT (properties-changed) when the reverted property was changed since; other properties do not conflict', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS, properties: PROPERTIES });
    await patchProperties(doc, editor, { status: 's1' });
    const ra = await patchProperties(doc, editor, { status: 'A' });
    await patchProperties(doc, owner, { status: 'B-later-by-owner' });

    const res = await request(t.http)
      .post(`${doc.path}/revisions/${ra}/revert`)
      .set(bearer(editor))
      .expect(409);
    expect(res.body.code).toBe('CONFLICT');
    expect(res.body.payload).toMatchObject({
      requestId: expect.any(String),
      conflicts: [
        expect.objectContaining({ type: 'properties-changed', targetId: 'properties', fieldId: 'status' }),
      ],
    });
    expect(await properties(doc)).toEqual([{ fieldId: 'status', value: { text: 'B-later-by-owner' } }]);

    // A later change of another property is no conflict; reverting the same revision twice is (the value moved on).
    const rb = await patchProperties(doc, editor, { status: 'C' });
    await patchProperties(doc, owner, { note: 'unrelated' });
    await request(t.http).post(`${doc.path}/revisions/${rb}/revert`).set(bearer(editor)).expect(200);
    expect(await properties(doc)).toEqual([
      { fieldId: 'status', value: { text: 'B-later-by-owner' } },
      { fieldId: 'note', value: { text: 'unrelated' } },
    ]);
    const again = await request(t.http)
      .post(`${doc.path}/revisions/${rb}/revert`)
      .set(bearer(editor))
      .expect(409);
    expect(again.body.payload.conflicts).toEqual([
      expect.objectContaining({ type: 'properties-changed', fieldId: 'status' }),
    ]);
  });

  it('lets the revert request merge once a change of the conflicting property is appended to it', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS, properties: PROPERTIES });
    const ra = await patchProperties(doc, editor, { status: 'A' });
    await patchProperties(doc, owner, { status: 'B' });
    const conflict = await request(t.http)
      .post(`${doc.path}/revisions/${ra}/revert`)
      .set(bearer(editor))
      .expect(409);
    const requestId = conflict.body.payload.requestId as string;
    await request(t.http)
      .patch(`${doc.path}/properties?requestId=${requestId}`)
      .set(bearer(editor))
      .send({ properties: { status: null } })
      .expect(200);
    const conflicts = await request(t.http)
      .get(`${doc.path}/requests/${requestId}/conflicts`)
      .set(bearer(editor))
      .expect(200);
    expect(conflicts.body.payload).toEqual({ mergeable: true, conflicts: [] });
  });
});
