import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  API,
  bearer,
  createDocument,
  createRow,
  type DocHandle,
  newUser,
} from '../documents/documents.fixtures.js';

/**
 * What a reader of the spec sends: a representation read from the service sent back with changes, the spec's own
 * fields and query parameters on every write, nulls for ids a scope does not use, open `permissions` keys.
 */
describe('read-write round trips and the inputs the spec names', () => {
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
      properties: [{ id: 'owner_note', name: 'Note', type: 'text' }],
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('takes back the metadata it answered, its version an optimistic lock', async () => {
    const read = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body
      .payload;
    const fields = [...read.fields, { id: 'extra', name: 'Extra', type: 'text' }];
    const written = await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ ...read, fields })
      .expect(200);
    expect(written.body.payload.version).toBe(read.version + 1);
    const stale = await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ ...read, fields })
      .expect(409);
    expect(stale.body).toMatchObject({
      code: 'VERSION_CONFLICT',
      payload: { currentVersion: read.version + 1, yourVersion: read.version },
    });
  });

  it('takes back the document properties it answered', async () => {
    const read = (await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200)).body
      .payload;
    const sent = { ...read, properties: [{ fieldId: 'owner_note', value: { text: 'round trip' } }] };
    const written = await request(t.http)
      .put(`${doc.path}/properties`)
      .set(bearer(owner))
      .send(sent)
      .expect(200);
    expect(written.body.payload.properties).toEqual([
      { fieldId: 'owner_note', value: { text: 'round trip' } },
    ]);
  });

  it('takes back the type-level settings it answered', async () => {
    const path = `${API}/doc/${doc.docType}/setting?workspaceId=${owner.defaultWorkspaceId}`;
    const read = (await request(t.http).get(path).set(bearer(owner)).expect(200)).body.payload;
    const written = await request(t.http)
      .put(path)
      .set(bearer(owner))
      .send({ ...read, retention: { closedRequestsDays: 30 } })
      .expect(200);
    expect(written.body.payload).toMatchObject({ docType: doc.docType, retention: { closedRequestsDays: 30 }, updatedBy: owner.id });
    const again = await request(t.http).put(path).set(bearer(owner)).send(written.body.payload).expect(200);
    expect(again.body.payload.retention).toEqual({ closedRequestsDays: 30 });
    // Keys a settings answer never has are still refused.
    await request(t.http).put(path).set(bearer(owner)).send({ ...read, retentoin: {} }).expect(400);
  });

  it('takes a view as read on PUT and the write parameters on every view write', async () => {
    const created = await request(t.http)
      .post(`${doc.path}/views?requestId=ignored`)
      .set(bearer(owner))
      .send({ id: 'grid', name: 'Grid', type: 'table' })
      .expect(201);
    const view = created.body.payload;
    const renamed = await request(t.http)
      .put(`${doc.path}/views/grid`)
      .set(bearer(owner))
      .send({ ...view, name: 'Renamed' })
      .expect(200);
    expect(renamed.body.payload).toMatchObject({ id: 'grid', name: 'Renamed', type: 'table' });
    const other = await request(t.http)
      .put(`${doc.path}/views/grid`)
      .set(bearer(owner))
      .send({ ...view, id: 'elsewhere' })
      .expect(400);
    expect(other.body.code).toBe('VALIDATION_ERROR');
    const deprecated = await request(t.http)
      .post(`${doc.path}/views/grid/default?apply=true`)
      .set(bearer(owner))
      .expect(200);
    expect(deprecated.headers['x-api-deprecated']).toBe('true');
  });

  it('reads null ids of a comment target as absent', async () => {
    const res = await request(t.http)
      .post(`${doc.path}/comments`)
      .set(bearer(editor))
      .send({ target: { scope: 'document', fieldId: null, rowId: null }, content: 'Nulls are fine' })
      .expect(201);
    expect(res.body.payload.target).toMatchObject({ scope: 'document' });
  });

  it('keeps permission keys it does not enforce and takes bare role names as subjects', async () => {
    const permissions = { edit: ['owner'], allowExport: true };
    const saved = await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({ permissions })
      .expect(200);
    expect(saved.body.payload.permissions).toMatchObject(permissions);
    await createRow(t.http, owner, doc, { id: 'kept', values: { name: 'Owner may' } });
    await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(editor))
      .send({ id: 'refused', values: { name: 'Editor may not' } })
      .expect(403);
    await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({ permissions: { edit: ['nobody-known'] } })
      .expect(400);

    const typeLevel = `${API}/doc/${doc.docType}/setting?workspaceId=${owner.defaultWorkspaceId}`;
    const anyJson = await request(t.http)
      .put(typeLevel)
      .set(bearer(owner))
      .send({ permissions: ['any', 'json'] })
      .expect(200);
    expect(anyJson.body.payload.permissions).toEqual(['any', 'json']);
    // Not an object of subject lists: stored, not enforced.
    await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(owner))
      .send({ id: 'still', values: { name: 'Still writable' } })
      .expect(201);
  });

  it('refuses a null display name with VALIDATION_ERROR and takes locales such as en_US; a malformed key id is not found', async () => {
    const nulled = await request(t.http)
      .patch(`${API}/users/me`)
      .set(bearer(owner))
      .send({ displayName: null })
      .expect(400);
    expect(nulled.body.code).toBe('VALIDATION_ERROR');
    const locale = await request(t.http)
      .patch(`${API}/users/me`)
      .set(bearer(owner))
      .send({ locale: 'en_US' })
      .expect(200);
    expect(locale.body.payload.locale).toBe('en_US');
    // An http(s) avatar URL and an IANA time zone; anything else is refused by name.
    for (const [body, field] of [
      [{ avatarUrl: 'ftp://example.test/me.png' }, 'avatarUrl'],
      [{ avatarUrl: 'example.test/me.png' }, 'avatarUrl'],
      [{ timezone: 'Not/AZone' }, 'timezone'],
    ] as const) {
      const refused = await request(t.http)
        .patch(`${API}/users/me`)
        .set(bearer(owner))
        .send(body)
        .expect(400);
      expect(refused.body.details.field).toBe(field);
    }
    const profile = await request(t.http)
      .patch(`${API}/users/me`)
      .set(bearer(owner))
      .send({ avatarUrl: 'https://example.test/me.png', timezone: 'Europe/Berlin' })
      .expect(200);
    expect(profile.body.payload).toMatchObject({
      avatarUrl: 'https://example.test/me.png',
      timezone: 'Europe/Berlin',
    });
    const revoke = await request(t.http)
      .post(`${API}/api-keys/not-a-key/revoke`)
      .set(bearer(owner))
      .expect(404);
    expect(revoke.body.code).toBe('NOT_FOUND');
  });
});
