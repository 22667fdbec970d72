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
  valueOf,
} from './documents.fixtures.js';

/**
 * A request stuck on `row-changed` is freed by appending a change of the row with the committed version the conflict
 * reports (docs/documents.md, "Merge"): the request's base version for the row becomes that version.
 */
describe('documents: re-basing a conflicting row of a request', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await newUser(t.http);
    bob = await newUser(t.http);
    await addToWorkspace(t.dataSource, alice, bob, 'editor');
    doc = await createDocument(t.http, alice);
  });
  afterAll(async () => {
    await t.close();
  });

  async function openRequest(user: TestUser, path = doc.path): Promise<string> {
    const res = await request(t.http)
      .post(`${path}/requests`)
      .set(bearer(user))
      .send({ title: 'Bob edits' })
      .expect(201);
    return res.body.payload.id;
  }

  const appendUpdate = (reqId: string, rowId: string, values: Record<string, unknown>, version?: number) =>
    request(t.http)
      .put(`${doc.path}/data/${rowId}?requestId=${reqId}`)
      .set(bearer(bob))
      .send(version === undefined ? { values } : { values, version });

  const directUpdate = (rowId: string, values: Record<string, unknown>) =>
    request(t.http).put(`${doc.path}/data/${rowId}`).set(bearer(alice)).send({ values }).expect(200);

  const conflictsOf = async (reqId: string) =>
    (await request(t.http).get(`${doc.path}/requests/${reqId}/conflicts`).set(bearer(bob)).expect(200)).body
      .payload;

  const readRow = async (rowId: string) =>
    (await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(alice)).expect(200)).body.payload;

  it('conflict → append with the reported currentVersion → the conflict is gone and the merge applies the request over the committed row', async () => {
    await createRow(t.http, alice, doc, { id: 'r1', values: { name: 'R1', qty: 0, price: 5 } });
    const reqId = await openRequest(bob);
    await appendUpdate(reqId, 'r1', { qty: 1, name: 'Bob' }, 1).expect(200);
    await directUpdate('r1', { qty: 2, price: 7 });

    const refused = await request(t.http)
      .post(`${doc.path}/requests/${reqId}/merge`)
      .set(bearer(bob))
      .expect(409);
    expect(refused.body.code).toBe('CONFLICT');
    expect(refused.body.payload.conflicts).toEqual([
      expect.objectContaining({ type: 'row-changed', rowId: 'r1', baseVersion: 1, currentVersion: 2 }),
    ]);
    // The 409 names the way out.
    expect(refused.body.payload.conflicts[0].reason).toContain('version 2 to re-base');
    const { currentVersion } = refused.body.payload.conflicts[0];

    // The draft lays the request over the row as committed now, version committed + 1; it does not show the conflict.
    const draft = (
      await request(t.http).get(`${doc.path}/data/r1?requestId=${reqId}`).set(bearer(bob)).expect(200)
    ).body.payload;
    expect(draft.version).toBe(3);
    expect(valueOf(draft, 'qty')).toEqual({ number: 1 });
    expect(valueOf(draft, 'price')).toEqual({ number: 7 });
    // An ordinary append (the draft's version) is taken but does not re-base: the conflict stays.
    await appendUpdate(reqId, 'r1', { qty: 3 }, draft.version).expect(200);
    expect((await conflictsOf(reqId)).conflicts).toEqual([
      expect.objectContaining({ type: 'row-changed', rowId: 'r1', baseVersion: 1, currentVersion: 2 }),
    ]);
    // The old base version is stale.
    const stale = await appendUpdate(reqId, 'r1', { qty: 4 }, 1).expect(409);
    expect(stale.body).toMatchObject({
      code: 'VERSION_CONFLICT',
      payload: { currentVersion: 3, yourVersion: 1 },
    });

    const rebased = await appendUpdate(reqId, 'r1', { qty: 4 }, currentVersion).expect(200);
    expect(rebased.body.payload).toMatchObject({ id: 'r1', version: 3 });
    expect(valueOf(rebased.body.payload, 'qty')).toEqual({ number: 4 });
    const detail = await request(t.http).get(`${doc.path}/requests/${reqId}`).set(bearer(bob)).expect(200);
    expect(detail.body.payload.changes.at(-1)).toMatchObject({
      type: 'row-update',
      targetId: 'r1',
      data: { baseVersion: 2, rebase: true },
    });
    expect(await conflictsOf(reqId)).toEqual({ mergeable: true, conflicts: [] });

    const merged = await request(t.http)
      .post(`${doc.path}/requests/${reqId}/merge`)
      .set(bearer(bob))
      .expect(200);
    expect(merged.body.payload.status).toBe('merged');
    const row = await readRow('r1');
    // The request's values (its earlier `name`, the re-basing `qty`) over Alice's committed row (her `price`).
    expect(row.version).toBe(3);
    expect(valueOf(row, 'qty')).toEqual({ number: 4 });
    expect(valueOf(row, 'name')).toEqual({ text: 'Bob' });
    expect(valueOf(row, 'price')).toEqual({ number: 7 });
  });

  it('still refuses an older version, and a committed version while the row is not in conflict', async () => {
    await createRow(t.http, alice, doc, { id: 'o1', values: { name: 'O1', qty: 0 } });
    const reqId = await openRequest(bob);
    await appendUpdate(reqId, 'o1', { qty: 1 }, 1).expect(200);
    // Not in conflict: the committed version (1) is not the draft's (2).
    const notInConflict = await appendUpdate(reqId, 'o1', { qty: 9 }, 1).expect(409);
    expect(notInConflict.body).toMatchObject({
      code: 'VERSION_CONFLICT',
      payload: { currentVersion: 2, yourVersion: 1 },
    });

    await directUpdate('o1', { qty: 2 });
    await directUpdate('o1', { qty: 3 });
    const merge = await request(t.http)
      .post(`${doc.path}/requests/${reqId}/merge`)
      .set(bearer(bob))
      .expect(409);
    expect(merge.body.payload.conflicts).toEqual([
      expect.objectContaining({ type: 'row-changed', rowId: 'o1', baseVersion: 1, currentVersion: 3 }),
    ]);
    // A version between the base and the committed one is no way out.
    const older = await appendUpdate(reqId, 'o1', { qty: 9 }, 2).expect(409);
    expect(older.body).toMatchObject({
      code: 'VERSION_CONFLICT',
      payload: { currentVersion: 4, yourVersion: 2 },
    });
    expect((await conflictsOf(reqId)).conflicts).toEqual([
      expect.objectContaining({ type: 'row-changed', rowId: 'o1', baseVersion: 1, currentVersion: 3 }),
    ]);

    await appendUpdate(reqId, 'o1', { qty: 9 }, 3).expect(200);
    // Re-based once, the same version is stale again: a second contributor's re-base of the same conflict is refused.
    const again = await appendUpdate(reqId, 'o1', { qty: 10 }, 3).expect(409);
    expect(again.body).toMatchObject({
      code: 'VERSION_CONFLICT',
      payload: { currentVersion: 4, yourVersion: 3 },
    });
    // The row changing after the re-base is a conflict again, against the new base.
    await directUpdate('o1', { qty: 5 });
    const later = await request(t.http)
      .post(`${doc.path}/requests/${reqId}/merge`)
      .set(bearer(bob))
      .expect(409);
    expect(later.body.payload.conflicts).toEqual([
      expect.objectContaining({ type: 'row-changed', rowId: 'o1', baseVersion: 3, currentVersion: 4 }),
    ]);
    expect(valueOf(await readRow('o1'), 'qty')).toEqual({ number: 5 });
  });

  it('re-bases one row only: a conflict on another row of the same request is still reported', async () => {
    await createRow(t.http, alice, doc, { id: 'p1', values: { name: 'P1', qty: 0 } });
    await createRow(t.http, alice, doc, { id: 'p2', values: { name: 'P2', qty: 0 } });
    const reqId = await openRequest(bob);
    await appendUpdate(reqId, 'p1', { qty: 1 }).expect(200);
    await appendUpdate(reqId, 'p2', { qty: 1 }).expect(200);
    await directUpdate('p1', { qty: 2 });
    await directUpdate('p2', { qty: 2 });
    const both = await request(t.http)
      .post(`${doc.path}/requests/${reqId}/merge`)
      .set(bearer(bob))
      .expect(409);
    expect(both.body.payload.conflicts.map((conflict: { rowId: string }) => conflict.rowId).sort()).toEqual([
      'p1',
      'p2',
    ]);

    await appendUpdate(reqId, 'p1', { qty: 11 }, 2).expect(200);
    expect(await conflictsOf(reqId)).toMatchObject({
      mergeable: false,
      conflicts: [{ type: 'row-changed', rowId: 'p2', baseVersion: 1, currentVersion: 2 }],
    });
    const one = await request(t.http)
      .post(`${doc.path}/requests/${reqId}/merge`)
      .set(bearer(bob))
      .expect(409);
    expect(one.body.payload.conflicts).toEqual([
      expect.objectContaining({ type: 'row-changed', rowId: 'p2' }),
    ]);
    expect(valueOf(await readRow('p1'), 'qty')).toEqual({ number: 2 });

    await appendUpdate(reqId, 'p2', { qty: 12 }, 2).expect(200);
    await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(bob)).expect(200);
    expect(valueOf(await readRow('p1'), 'qty')).toEqual({ number: 11 });
    expect(valueOf(await readRow('p2'), 'qty')).toEqual({ number: 12 });
  });

  it('frees a conflicting revert request: re-based, it merges with the reverted cells over the newer row', async () => {
    await createRow(t.http, alice, doc, { id: 'v1', values: { name: 'V1', qty: 1, price: 1 } });
    const updated = await request(t.http)
      .put(`${doc.path}/data/v1`)
      .set(bearer(alice))
      .send({ values: { qty: 2 } })
      .expect(200);
    await directUpdate('v1', { price: 3 });
    const revert = await request(t.http)
      .post(`${doc.path}/revisions/${updated.body.payload.request.revisionId}/revert`)
      .set(bearer(alice))
      .expect(409);
    expect(revert.body.payload.conflicts).toEqual([
      expect.objectContaining({ type: 'row-changed', rowId: 'v1', baseVersion: 2, currentVersion: 3 }),
    ]);
    const reqId = revert.body.payload.requestId as string;

    await request(t.http)
      .put(`${doc.path}/data/v1?requestId=${reqId}`)
      .set(bearer(alice))
      .send({ values: { qty: 1 }, version: 3 })
      .expect(200);
    const merged = await request(t.http)
      .post(`${doc.path}/requests/${reqId}/merge`)
      .set(bearer(alice))
      .expect(200);
    expect(merged.body.payload.status).toBe('merged');
    const row = await readRow('v1');
    expect(valueOf(row, 'qty')).toEqual({ number: 1 });
    expect(valueOf(row, 'price')).toEqual({ number: 3 });
  });

  it('re-bases a delete (a delete with the committed version) and a delete + re-create (an update with it)', async () => {
    await createRow(t.http, alice, doc, { id: 'd1', values: { name: 'D1' } });
    await createRow(t.http, alice, doc, { id: 'c1', values: { name: 'C1', qty: 0, price: 1 } });
    const reqId = await openRequest(bob);
    await request(t.http).delete(`${doc.path}/data/d1?requestId=${reqId}`).set(bearer(bob)).expect(200);
    await request(t.http).delete(`${doc.path}/data/c1?requestId=${reqId}`).set(bearer(bob)).expect(200);
    await request(t.http)
      .post(`${doc.path}/data?requestId=${reqId}`)
      .set(bearer(bob))
      .send({ id: 'c1', values: { name: 'C1 again', qty: 1 } })
      .expect(201);
    await directUpdate('d1', { qty: 5 });
    await directUpdate('c1', { qty: 5, price: 9 });
    const refused = await request(t.http)
      .post(`${doc.path}/requests/${reqId}/merge`)
      .set(bearer(bob))
      .expect(409);
    expect(
      refused.body.payload.conflicts
        .map((conflict: { rowId: string; type: string }) => `${conflict.type}:${conflict.rowId}`)
        .sort(),
    ).toEqual(['row-changed:c1', 'row-changed:d1']);

    // The draft has no d1: a delete of it is NOT_FOUND unless it names the committed version.
    await request(t.http).delete(`${doc.path}/data/d1?requestId=${reqId}`).set(bearer(bob)).expect(404);
    await request(t.http)
      .delete(`${doc.path}/data/d1?requestId=${reqId}&version=1`)
      .set(bearer(bob))
      .expect(404);
    await request(t.http)
      .delete(`${doc.path}/data/d1?requestId=${reqId}&version=2`)
      .set(bearer(bob))
      .expect(200);
    await appendUpdate(reqId, 'c1', { qty: 2 }, 2).expect(200);
    expect(await conflictsOf(reqId)).toEqual({ mergeable: true, conflicts: [] });

    await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(bob)).expect(200);
    await request(t.http).get(`${doc.path}/data/d1`).set(bearer(alice)).expect(404);
    const replaced = await readRow('c1');
    // A replace: the re-created values and the re-basing change, nothing of Alice's row left (her price is gone).
    expect(valueOf(replaced, 'name')).toEqual({ text: 'C1 again' });
    expect(valueOf(replaced, 'qty')).toEqual({ number: 2 });
    expect(valueOf(replaced, 'price')).toBeUndefined();
  });
  describe('properties', () => {
    let props: DocHandle;
    beforeAll(async () => {
      props = await createDocument(t.http, alice, {
        properties: [
          { id: 'supplier', name: 'Supplier', type: 'text' },
          { id: 'budget', name: 'Budget', type: 'number' },
        ],
      });
      await request(t.http)
        .post(`${props.path}/properties`)
        .set(bearer(alice))
        .send({ properties: { supplier: 'ACME', budget: 1 } })
        .expect(201);
    });

    const propertiesOf = async () =>
      Object.fromEntries(
        (
          await request(t.http).get(`${props.path}/properties`).set(bearer(alice)).expect(200)
        ).body.payload.properties.map((entry: { fieldId: string; value: unknown }) => [
          entry.fieldId,
          entry.value,
        ]),
      );

    it('conflict → PATCH with the committed version → the request merges over the committed properties', async () => {
      const reqId = await openRequest(bob, props.path);
      await request(t.http)
        .patch(`${props.path}/properties?requestId=${reqId}&version=1`)
        .set(bearer(bob))
        .send({ properties: { budget: 2 } })
        .expect(200);
      await request(t.http)
        .patch(`${props.path}/properties`)
        .set(bearer(alice))
        .send({ properties: { supplier: 'Globex' } })
        .expect(200);

      const refused = await request(t.http)
        .post(`${props.path}/requests/${reqId}/merge`)
        .set(bearer(bob))
        .expect(409);
      expect(refused.body.payload.conflicts).toEqual([
        expect.objectContaining({
          type: 'properties-changed',
          targetId: 'properties',
          baseVersion: 1,
          currentVersion: 2,
        }),
      ]);
      expect(refused.body.payload.conflicts[0].reason).toContain('version 2 to re-base');

      // An older version, or the draft's own version, does not re-base.
      const stale = await request(t.http)
        .patch(`${props.path}/properties?requestId=${reqId}&version=1`)
        .set(bearer(bob))
        .send({ properties: { budget: 3 } })
        .expect(409);
      expect(stale.body).toMatchObject({
        code: 'VERSION_CONFLICT',
        payload: { currentVersion: 3, yourVersion: 1 },
      });
      await request(t.http)
        .patch(`${props.path}/properties?requestId=${reqId}&version=2`)
        .set(bearer(bob))
        .send({ properties: { budget: 3 } })
        .expect(200);
      expect(
        (await request(t.http).get(`${props.path}/requests/${reqId}/conflicts`).set(bearer(bob)).expect(200))
          .body.payload,
      ).toEqual({
        mergeable: true,
        conflicts: [],
      });
      // The same version again, now that the properties are not in conflict, is the draft's version check as always.
      await request(t.http)
        .patch(`${props.path}/properties?requestId=${reqId}&version=2`)
        .set(bearer(bob))
        .send({ properties: { budget: 4 } })
        .expect(409);

      await request(t.http).post(`${props.path}/requests/${reqId}/merge`).set(bearer(bob)).expect(200);
      // Bob's budget over Alice's supplier.
      expect(await propertiesOf()).toEqual({ supplier: { text: 'Globex' }, budget: { number: 3 } });
    });

    it('re-bases a delete of the properties (DELETE with the committed version)', async () => {
      const reqId = await openRequest(bob, props.path);
      await request(t.http)
        .delete(`${props.path}/properties?requestId=${reqId}`)
        .set(bearer(bob))
        .expect(200);
      await request(t.http)
        .patch(`${props.path}/properties`)
        .set(bearer(alice))
        .send({ properties: { budget: 9 } })
        .expect(200);
      const version = (await request(t.http).get(`${props.path}/properties`).set(bearer(alice)).expect(200))
        .body.payload.version;
      await request(t.http).post(`${props.path}/requests/${reqId}/merge`).set(bearer(bob)).expect(409);
      await request(t.http)
        .delete(`${props.path}/properties?requestId=${reqId}&version=${version}`)
        .set(bearer(bob))
        .expect(200);
      await request(t.http).post(`${props.path}/requests/${reqId}/merge`).set(bearer(bob)).expect(200);
      expect(await propertiesOf()).toEqual({});
    });
  });
  // Metadata needs manage rights: the owner writes the request and the direct changes.
  describe('metadata', () => {
    it('conflict → PUT /metadata with the committed version → the request merges its metadata as written', async () => {
      const meta = await createDocument(t.http, alice, {
        fields: [{ id: 'name', name: 'Name', type: 'text' }],
      });
      const committed = async () =>
        (await request(t.http).get(`${meta.path}/metadata`).set(bearer(alice)).expect(200)).body.payload;
      const start = await committed();
      const reqId = await openRequest(alice, meta.path);
      const color = { id: 'color', name: 'Color', type: 'text' };
      await request(t.http)
        .put(`${meta.path}/metadata?requestId=${reqId}`)
        .set(bearer(alice))
        .send({ fields: [...start.fields, color], version: start.version })
        .expect(200);
      const size = { id: 'size', name: 'Size', type: 'number' };
      await request(t.http)
        .put(`${meta.path}/metadata`)
        .set(bearer(alice))
        .send({ fields: [...start.fields, size] })
        .expect(200);
      const now = await committed();

      const refused = await request(t.http)
        .post(`${meta.path}/requests/${reqId}/merge`)
        .set(bearer(alice))
        .expect(409);
      expect(refused.body.payload.conflicts).toEqual([
        expect.objectContaining({
          type: 'metadata-changed',
          baseVersion: start.version,
          currentVersion: now.version,
        }),
      ]);
      expect(refused.body.payload.conflicts[0].reason).toContain(`version ${now.version} to re-base`);
      // An older version does not re-base.
      await request(t.http)
        .put(`${meta.path}/metadata?requestId=${reqId}`)
        .set(bearer(alice))
        .send({ fields: [...now.fields, color], version: start.version })
        .expect(409);

      // The author reads the committed metadata, adds their field to it and sends it with its version.
      await request(t.http)
        .put(`${meta.path}/metadata?requestId=${reqId}`)
        .set(bearer(alice))
        .send({ fields: [...now.fields, color], version: now.version })
        .expect(200);
      expect(
        (await request(t.http).get(`${meta.path}/requests/${reqId}/conflicts`).set(bearer(alice)).expect(200))
          .body.payload,
      ).toEqual({
        mergeable: true,
        conflicts: [],
      });
      await request(t.http).post(`${meta.path}/requests/${reqId}/merge`).set(bearer(alice)).expect(200);
      expect((await committed()).fields.map((field: { id: string }) => field.id)).toEqual([
        'name',
        'size',
        'color',
      ]);
    });

    it('re-bases with the draft unchanged: the same metadata sent with the committed version', async () => {
      const meta = await createDocument(t.http, alice, {
        fields: [{ id: 'name', name: 'Name', type: 'text' }],
      });
      const start = (await request(t.http).get(`${meta.path}/metadata`).set(bearer(alice)).expect(200)).body
        .payload;
      const reqId = await openRequest(alice, meta.path);
      const mine = [...start.fields, { id: 'color', name: 'Color', type: 'text' }];
      await request(t.http)
        .put(`${meta.path}/metadata?requestId=${reqId}`)
        .set(bearer(alice))
        .send({ fields: mine })
        .expect(200);
      // A direct rename; the request's draft already holds what its author wants (the rename is dropped by it).
      await request(t.http)
        .put(`${meta.path}/metadata`)
        .set(bearer(alice))
        .send({ fields: [{ id: 'name', name: 'Title', type: 'text' }] })
        .expect(200);
      const now = (await request(t.http).get(`${meta.path}/metadata`).set(bearer(alice)).expect(200)).body
        .payload;
      await request(t.http).post(`${meta.path}/requests/${reqId}/merge`).set(bearer(alice)).expect(409);
      await request(t.http)
        .put(`${meta.path}/metadata?requestId=${reqId}`)
        .set(bearer(alice))
        .send({ fields: mine, version: now.version })
        .expect(200);
      await request(t.http).post(`${meta.path}/requests/${reqId}/merge`).set(bearer(alice)).expect(200);
      const merged = (await request(t.http).get(`${meta.path}/metadata`).set(bearer(alice)).expect(200)).body
        .payload;
      expect(merged.fields.map((field: { name: string }) => field.name)).toEqual(['Name', 'Color']);
    });
  });
});
