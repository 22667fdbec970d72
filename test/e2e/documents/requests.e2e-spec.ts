import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, createRow, type DocHandle, newUser, seedRows, valueOf } from './documents.fixtures.js';

describe('documents: requests, merge and revisions', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    doc = await createDocument(t.http, owner);
    await createRow(t.http, owner, doc, { id: 'base', values: { name: 'Base', qty: 1 } });
  });
  afterAll(async () => {
    await t.close();
  });

  async function openRequest(user: TestUser, title = 'Draft'): Promise<string> {
    const res = await request(t.http).post(`${doc.path}/requests`).set(bearer(user)).send({ title, description: 'desc' }).expect(201);
    expect(res.body.payload).toMatchObject({ status: 'open', author: user.id, title, docId: doc.docId, docType: doc.docType });
    return res.body.payload.id;
  }

  it('records writes with requestId as changes; the document changes only on merge; readers of the draft see it', async () => {
    const reqId = await openRequest(owner);
    const created = await request(t.http).post(`${doc.path}/data?requestId=${reqId}`).set(bearer(editor)).send({ id: 'n1', values: { name: 'New' } }).expect(201);
    expect(created.body.payload).toMatchObject({ id: 'n1', request: { requestId: reqId, requestStatus: 'open', merged: false, revisionId: null } });
    await request(t.http).put(`${doc.path}/data/base?requestId=${reqId}`).set(bearer(editor)).send({ values: { qty: 7 }, version: 1 }).expect(200);

    // The document itself is unchanged.
    await request(t.http).get(`${doc.path}/data/n1`).set(bearer(owner)).expect(404);
    const base = await request(t.http).get(`${doc.path}/data/base`).set(bearer(owner)).expect(200);
    expect(valueOf(base.body.payload, 'qty')).toEqual({ number: 1 });

    // The draft shows the request applied: in lists, queries and single reads.
    const draftList = await request(t.http).get(`${doc.path}/data?requestId=${reqId}&sort=name:asc`).set(bearer(owner)).expect(200);
    expect(draftList.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['base', 'n1']);
    expect(draftList.body.payload.total).toBe(2);
    const draftBase = draftList.body.payload.items[0];
    expect(valueOf(draftBase, 'qty')).toEqual({ number: 7 });
    expect(draftBase.version).toBe(2);
    const draftQuery = await request(t.http)
      .post(`${doc.path}/data/query?requestId=${reqId}`)
      .set(bearer(owner))
      .send({ filter: { and: [{ field: 'qty', op: 'gt', value: 5 }] } })
      .expect(200);
    expect(draftQuery.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['base']);
    await request(t.http).get(`${doc.path}/data/n1?requestId=${reqId}`).set(bearer(owner)).expect(200);

    const detail = await request(t.http).get(`${doc.path}/requests/${reqId}`).set(bearer(owner)).expect(200);
    expect(detail.body.payload.contributors).toEqual(expect.arrayContaining([owner.id, editor.id]));
    expect(detail.body.payload.changes.map((c: { type: string }) => c.type)).toEqual(['row-create', 'row-update']);
    expect(detail.body.payload.changes[1]).toMatchObject({ operation: 'update', targetId: 'base', changedBy: editor.id, data: { baseVersion: 1 } });

    const diff = await request(t.http).get(`${doc.path}/requests/${reqId}/diff`).set(bearer(owner)).expect(200);
    expect(diff.body.payload.addedRows.map((row: { id: string }) => row.id)).toEqual(['n1']);
    expect(diff.body.payload.updatedCells).toEqual([{ rowId: 'base', fieldId: 'qty', oldValue: { number: 1 }, newValue: { number: 7 } }]);

    const merged = await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(200);
    expect(merged.body.payload).toMatchObject({ status: 'merged', mergedBy: owner.id, generatedRevisionId: expect.any(String) });
    expect(merged.body.payload.mergedAt).toEqual(expect.any(String));
    const revision = merged.body.payload.revision;
    expect(revision).toMatchObject({ requestId: reqId, mergedBy: owner.id, stats: { rowsCreated: 1, rowsUpdated: 1, rowsDeleted: 0 } });
    expect(revision.contributors).toEqual(expect.arrayContaining([owner.id, editor.id]));

    const after = await request(t.http).get(`${doc.path}/data/base`).set(bearer(owner)).expect(200);
    expect(after.body.payload).toMatchObject({ version: 2 });
    expect(valueOf(after.body.payload, 'qty')).toEqual({ number: 7 });

    const rev = await request(t.http).get(`${doc.path}/revisions/${revision.id}`).set(bearer(owner)).expect(200);
    const update = rev.body.payload.changes.find((op: { type: string }) => op.type === 'row-update');
    expect(update).toMatchObject({ target: { kind: 'row', rowId: 'base' }, operator: owner.id });
    expect(update.oldValue.values).toEqual([{ fieldId: 'qty', value: { number: 1 } }]);
    expect(update.newValue.values).toEqual([{ fieldId: 'qty', value: { number: 7 } }]);
    const ofRevision = await request(t.http).get(`${doc.path}/revisions/${revision.id}/request`).set(bearer(owner)).expect(200);
    expect(ofRevision.body.payload.id).toBe(reqId);

    // Merged requests take no more writes and cannot be merged again.
    const late = await request(t.http).post(`${doc.path}/data?requestId=${reqId}`).set(bearer(owner)).send({ values: { name: 'late' } }).expect(409);
    expect(late.body.code).toBe('INVALID_STATE');
    await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(409);
  });

  it('numbers revisions per document and links each to the previous one', async () => {
    const list = await request(t.http).get(`${doc.path}/revisions`).set(bearer(owner)).expect(200);
    const versions = list.body.payload.items.map((rev: { version: number }) => rev.version);
    expect(versions).toEqual([...versions].sort((a, b) => b - a));
    expect(new Set(versions).size).toBe(versions.length);
    const [latest, previous] = list.body.payload.items;
    expect(latest.previousRevisionId).toBe(previous.id);
    expect(latest.version).toBe(previous.version + 1);
  });

  it('refuses a merge whose row changed meanwhile with CONFLICT listing it, and reports it under /conflicts', async () => {
    const row = await createRow(t.http, owner, doc, { id: 'k1', values: { name: 'K', qty: 1 } });
    const reqId = await openRequest(owner);
    await request(t.http).put(`${doc.path}/data/k1?requestId=${reqId}`).set(bearer(owner)).send({ values: { qty: 2 }, version: row.version }).expect(200);
    await request(t.http).put(`${doc.path}/data/k1`).set(bearer(editor)).send({ values: { qty: 3 } }).expect(200);

    const conflicts = await request(t.http).get(`${doc.path}/requests/${reqId}/conflicts`).set(bearer(owner)).expect(200);
    expect(conflicts.body.payload).toMatchObject({ mergeable: false, conflicts: [{ type: 'row-changed', rowId: 'k1', baseVersion: 1, currentVersion: 2 }] });
    const res = await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(409);
    expect(res.body.code).toBe('CONFLICT');
    expect(res.body.payload.conflicts).toEqual([expect.objectContaining({ type: 'row-changed', rowId: 'k1' })]);
    const still = await request(t.http).get(`${doc.path}/requests/${reqId}`).set(bearer(owner)).expect(200);
    expect(still.body.payload.status).toBe('open');
    const current = await request(t.http).get(`${doc.path}/data/k1`).set(bearer(owner)).expect(200);
    expect(valueOf(current.body.payload, 'qty')).toEqual({ number: 3 });
  });

  it('detects deleted rows and unique values taken meanwhile', async () => {
    await createRow(t.http, owner, doc, { id: 'g1', values: { name: 'G' } });
    const reqId = await openRequest(owner);
    await request(t.http).put(`${doc.path}/data/g1?requestId=${reqId}`).set(bearer(owner)).send({ values: { qty: 1 } }).expect(200);
    await request(t.http).post(`${doc.path}/data?requestId=${reqId}`).set(bearer(owner)).send({ id: 'g2', values: { name: 'G2', sku: 'TAKEN' } }).expect(201);
    await request(t.http).delete(`${doc.path}/data/g1`).set(bearer(owner)).expect(200);
    await createRow(t.http, owner, doc, { id: 'g3', values: { name: 'G3', sku: 'TAKEN' } });
    const res = await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(409);
    const types = res.body.payload.conflicts.map((c: { type: string }) => c.type).sort();
    expect(types).toEqual(['row-deleted', 'unique-taken']);
    await request(t.http).get(`${doc.path}/data/g2`).set(bearer(owner)).expect(404);
  });

  it('checks unique values against the draft: rows the request gave a value clash, rows it changed away do not', async () => {
    await createRow(t.http, owner, doc, { id: 'u0', values: { name: 'U0', sku: 'U-OLD' } });
    const reqId = await openRequest(owner);
    const write = (id: string, sku: string) =>
      request(t.http).post(`${doc.path}/data?requestId=${reqId}`).set(bearer(owner)).send({ id, values: { name: id, sku } });
    await write('u1', 'U-SAME').expect(201);
    const clash = await write('u2', 'U-SAME').expect(400);
    expect(clash.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { fieldId: 'sku', reason: 'value must be unique (row u1 has it)' } });
    // The request moves u1 and the committed u0 off their values: both are free in the draft.
    await request(t.http).put(`${doc.path}/data/u1?requestId=${reqId}`).set(bearer(owner)).send({ values: { sku: 'U-MOVED' } }).expect(200);
    await request(t.http).put(`${doc.path}/data/u0?requestId=${reqId}`).set(bearer(owner)).send({ values: { sku: 'U-NEW' } }).expect(200);
    await write('u2', 'U-SAME').expect(201);
    await write('u3', 'U-OLD').expect(201);
    await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(200);
  });

  it('serializes concurrent merges: both merge when they touch different rows, one conflicts on the same row', async () => {
    await createRow(t.http, owner, doc, { id: 'm1', values: { name: 'M1', qty: 0 } });
    await createRow(t.http, owner, doc, { id: 'm2', values: { name: 'M2', qty: 0 } });
    const a = await openRequest(owner, 'A');
    const b = await openRequest(owner, 'B');
    await request(t.http).put(`${doc.path}/data/m1?requestId=${a}`).set(bearer(owner)).send({ values: { qty: 1 } }).expect(200);
    await request(t.http).put(`${doc.path}/data/m2?requestId=${b}`).set(bearer(owner)).send({ values: { qty: 2 } }).expect(200);
    const results = await Promise.all([
      request(t.http).post(`${doc.path}/requests/${a}/merge`).set(bearer(owner)),
      request(t.http).post(`${doc.path}/requests/${b}/merge`).set(bearer(owner)),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    const versions = results.map((r) => r.body.payload.revision.version).sort((x, y) => x - y);
    expect(versions[1]).toBe(versions[0] + 1);

    const c = await openRequest(owner, 'C');
    const d = await openRequest(owner, 'D');
    await request(t.http).put(`${doc.path}/data/m1?requestId=${c}`).set(bearer(owner)).send({ values: { qty: 10 } }).expect(200);
    await request(t.http).put(`${doc.path}/data/m1?requestId=${d}`).set(bearer(owner)).send({ values: { qty: 20 } }).expect(200);
    const race = await Promise.all([
      request(t.http).post(`${doc.path}/requests/${c}/merge`).set(bearer(owner)),
      request(t.http).post(`${doc.path}/requests/${d}/merge`).set(bearer(owner)),
    ]);
    expect(race.map((r) => r.status).sort()).toEqual([200, 409]);
    const loser = race.find((r) => r.status === 409);
    expect(loser?.body.payload.conflicts[0]).toMatchObject({ type: 'row-changed', rowId: 'm1' });
    const row = await request(t.http).get(`${doc.path}/data/m1`).set(bearer(owner)).expect(200);
    expect(row.body.payload.version).toBe(3);
  });

  it('closes and reopens; a closed request takes no writes; wrong transitions are INVALID_STATE', async () => {
    const reqId = await openRequest(owner);
    const closed = await request(t.http).post(`${doc.path}/requests/${reqId}/close`).set(bearer(owner)).expect(200);
    expect(closed.body.payload.status).toBe('closed');
    const write = await request(t.http).post(`${doc.path}/data?requestId=${reqId}`).set(bearer(owner)).send({ values: { name: 'x' } }).expect(409);
    expect(write.body.code).toBe('INVALID_STATE');
    await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(409);
    await request(t.http).post(`${doc.path}/requests/${reqId}/close`).set(bearer(owner)).expect(409);
    const reopened = await request(t.http).post(`${doc.path}/requests/${reqId}/reopen`).set(bearer(owner)).expect(200);
    expect(reopened.body.payload.status).toBe('open');
    await request(t.http).post(`${doc.path}/requests/${reqId}/reopen`).set(bearer(owner)).expect(409);
    const list = await request(t.http).get(`${doc.path}/requests?status=open`).set(bearer(owner)).expect(200);
    expect(list.body.payload.items.map((r: { id: string }) => r.id)).toContain(reqId);
  });

  it('validates writes to a request at once and refuses unknown requests', async () => {
    const reqId = await openRequest(owner);
    const bad = await request(t.http).post(`${doc.path}/data?requestId=${reqId}`).set(bearer(owner)).send({ values: { name: 'x', price: 'abc' } }).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    const detail = await request(t.http).get(`${doc.path}/requests/${reqId}`).set(bearer(owner)).expect(200);
    expect(detail.body.payload.changes).toEqual([]);
    const unknown = await request(t.http).post(`${doc.path}/data?requestId=00000000-0000-0000-0000-000000000000`).set(bearer(owner)).send({ values: { name: 'x' } }).expect(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    await request(t.http).post(`${doc.path}/data?requestId=not-a-uuid`).set(bearer(owner)).send({ values: { name: 'x' } }).expect(404);
  });

  it('creates a request with changes in the body', async () => {
    const res = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({
        title: 'Batch',
        changes: [
          { type: 'row-create', target: { kind: 'row', rowId: 'b1' }, newValue: [{ fieldId: 'name', value: { text: 'B1' } }] },
          { type: 'row-update', target: { kind: 'row', rowId: 'b1', fieldId: 'qty' }, newValue: { number: 4 } },
        ],
      })
      .expect(201);
    expect(res.body.payload.changes).toHaveLength(2);
    // Spec 2.9 marks none of title, description, changes as required: a request without a title gets a default one.
    const untitled = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ description: 'no title' }).expect(201);
    expect(untitled.body.payload).toMatchObject({ title: 'Untitled request', description: 'no title', status: 'open' });
    await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: '' }).expect(400);
    const bad = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'Bad', changes: [{ type: 'row-update', target: { kind: 'row', rowId: 'base', fieldId: 'qty' }, newValue: 'abc' }] })
      .expect(400);
    expect(bad.body.details.field).toMatch(/^changes\[0\]/);
    const merged = await request(t.http).post(`${doc.path}/requests/${res.body.payload.id}/merge`).set(bearer(owner)).expect(200);
    expect(merged.body.payload.revision.stats.rowsCreated).toBe(1);
    const row = await request(t.http).get(`${doc.path}/data/b1`).set(bearer(owner)).expect(200);
    expect(valueOf(row.body.payload, 'qty')).toEqual({ number: 4 });
  });

  it('refuses a settings key PUT /settings refuses, in a settings-update change and on document creation; nothing is stored', async () => {
    // PUT /settings takes permissions, notifications and workflow only; a request's settings-update and the settings of
    // POST /doc are the same write and used to store {bogus: 1} into the settings.
    await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ bogus: 1 }).expect(400);
    const before = (await request(t.http).get(`${doc.path}/requests?pageSize=100`).set(bearer(owner)).expect(200)).body.payload.total;
    const refused = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'Settings', changes: [{ type: 'settings-update', target: { kind: 'settings' }, newValue: { bogus: 1, workflow: {} } }] })
      .expect(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'changes[0].bogus' } });
    expect((await request(t.http).get(`${doc.path}/requests?pageSize=100`).set(bearer(owner)).expect(200)).body.payload.total).toBe(before);
    const created = await request(t.http)
      .post(`/api/v1/doc/${doc.docType}`)
      .set(bearer(owner))
      .send({ id: 'settings-bogus', workspaceId: owner.defaultWorkspaceId, settings: { bogus: 1 } })
      .expect(400);
    expect(created.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'bogus' } });
    await request(t.http).get(`/api/v1/doc/${doc.docType}/settings-bogus?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).expect(404);
    expect((await request(t.http).get(`${doc.path}/settings`).set(bearer(owner)).expect(200)).body.payload).not.toHaveProperty('bogus');
    // A key stored before these checks is not answered, so what GET answers can still be sent back as a change.
    await t.dataSource.query(
      `UPDATE documents SET settings = settings || '{"legacy": 1}'::jsonb WHERE doc_id = $1 AND doc_type = $2`,
      [doc.docId, doc.docType],
    );
    const read = (await request(t.http).get(`${doc.path}/settings`).set(bearer(owner)).expect(200)).body.payload;
    expect(read).not.toHaveProperty('legacy');
    const back = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'Settings as read', changes: [{ type: 'settings-update', target: { kind: 'settings' }, newValue: read }] })
      .expect(201);
    await request(t.http).post(`${doc.path}/requests/${back.body.payload.id}/close`).set(bearer(owner)).expect(200);
  });

  it('shows the draft settings with requestId: GET /settings and the bundle settings section, as every draft read', async () => {
    const reqId = await openRequest(owner, 'Settings draft');
    await request(t.http).put(`${doc.path}/settings?requestId=${reqId}`).set(bearer(owner)).send({ notifications: { onMerge: true } }).expect(200);
    const committed = (await request(t.http).get(`${doc.path}/settings`).set(bearer(owner)).expect(200)).body.payload;
    expect(committed.notifications).not.toEqual({ onMerge: true });
    const draft = await request(t.http).get(`${doc.path}/settings?requestId=${reqId}`).set(bearer(owner)).expect(200);
    expect(draft.body.payload.notifications).toEqual({ onMerge: true });
    const bundle = await request(t.http).get(`${doc.path}?include=settings,metadata&requestId=${reqId}`).set(bearer(owner)).expect(200);
    expect(bundle.body.payload.settings.notifications).toEqual({ onMerge: true });
    const plain = await request(t.http).get(`${doc.path}?include=settings`).set(bearer(owner)).expect(200);
    expect(plain.body.payload.settings).toEqual(committed);
    await request(t.http).get(`${doc.path}/settings?requestId=00000000-0000-0000-0000-000000000000`).set(bearer(owner)).expect(404);
    await request(t.http).post(`${doc.path}/requests/${reqId}/close`).set(bearer(owner)).expect(200);
  });

  it('takes a property-delete change naming target.fieldId as the removal of that property only', async () => {
    const own = await createDocument(t.http, owner, {
      properties: [
        { id: 'p', name: 'P', type: 'text' },
        { id: 'q', name: 'Q', type: 'text' },
      ],
    });
    await request(t.http).patch(`${own.path}/properties`).set(bearer(owner)).send({ properties: { p: { text: 'v' }, q: { text: 'w' } } }).expect(200);
    const res = await request(t.http)
      .post(`${own.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'Drop p', changes: [{ type: 'property-delete', target: { kind: 'property', fieldId: 'p' } }] })
      .expect(201);
    const diff = await request(t.http).get(`${own.path}/requests/${res.body.payload.id}/diff`).set(bearer(owner)).expect(200);
    expect(diff.body.payload.changedProperties).toEqual([{ fieldId: 'p', oldValue: { text: 'v' }, newValue: null }]);
    await request(t.http).post(`${own.path}/requests/${res.body.payload.id}/merge`).set(bearer(owner)).expect(200);
    const props = await request(t.http).get(`${own.path}/properties`).set(bearer(owner)).expect(200);
    expect(props.body.payload.properties).toEqual([{ fieldId: 'q', value: { text: 'w' } }]);
    // An unknown property is refused, naming the change.
    const unknown = await request(t.http)
      .post(`${own.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'property-delete', target: { kind: 'property', fieldId: 'nope' } }] })
      .expect(400);
    expect(unknown.body.code).toBe('VALIDATION_ERROR');
  });

  it('takes field-create, field-update and field-delete changes in the body (spec 2.9), recorded as a metadata update', async () => {
    const own = await createDocument(t.http, owner);
    const res = await request(t.http)
      .post(`${own.path}/requests`)
      .set(bearer(owner))
      .send({
        title: 'Fields',
        changes: [
          { type: 'field-create', target: { kind: 'field', fieldId: 'color' }, newValue: { name: 'Color', type: 'text' } },
          { type: 'field-update', target: { kind: 'field', fieldId: 'qty' }, newValue: { name: 'Amount' } },
          { type: 'field-delete', target: { kind: 'field', fieldId: 'code' } },
          { type: 'row-create', target: { kind: 'row', rowId: 'f1' }, newValue: { values: { name: { text: 'F1' }, color: { text: 'red' } } } },
        ],
      })
      .expect(201);
    expect(res.body.payload.changes.map((change: { type: string }) => change.type)).toEqual([
      'metadata-update',
      'metadata-update',
      'metadata-update',
      'row-create',
    ]);
    const merged = await request(t.http).post(`${own.path}/requests/${res.body.payload.id}/merge`).set(bearer(owner)).expect(200);
    expect(merged.body.payload.revision.stats).toMatchObject({ fieldsCreated: 1, fieldsUpdated: 1, fieldsDeleted: 1, rowsCreated: 1 });
    const metadata = (await request(t.http).get(`${own.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    const ids = metadata.fields.map((field: { id: string }) => field.id);
    expect(ids).toContain('color');
    expect(ids).not.toContain('code');
    expect(metadata.fields.find((field: { id: string }) => field.id === 'qty')).toMatchObject({ name: 'Amount', type: 'number' });
    const row = await request(t.http).get(`${own.path}/data/f1`).set(bearer(owner)).expect(200);
    expect(valueOf(row.body.payload, 'color')).toEqual({ text: 'red' });

    for (const [change, field] of [
      [{ type: 'field-create', target: { kind: 'field', fieldId: 'color' }, newValue: { name: 'Again', type: 'text' } }, 'target.fieldId'],
      [{ type: 'field-update', target: { kind: 'field', fieldId: 'nope' }, newValue: { name: 'X' } }, 'target.fieldId'],
      [{ type: 'field-delete', target: { kind: 'field' } }, 'target.fieldId'],
      [{ type: 'field-create', target: { kind: 'field', fieldId: 'bad' }, newValue: { name: 'Bad', type: 'no-such-type' } }, undefined],
    ] as const) {
      const bad = await request(t.http).post(`${own.path}/requests`).set(bearer(owner)).send({ title: 'Bad', changes: [change] }).expect(400);
      expect(bad.body.code).toBe('VALIDATION_ERROR');
      if (field) {
        expect(bad.body.details.field).toBe(`changes[0].${field}`);
      }
    }
  });

  it('keeps writes open when the workflow requires approval; without an approved approval nobody merges them', async () => {
    const gated = await createDocument(t.http, owner);
    await createRow(t.http, owner, gated, { id: 'p0', values: { name: 'Before' } });
    await request(t.http).put(`${gated.path}/settings`).set(bearer(owner)).send({ workflow: { requiresApproval: true } }).expect(200);
    const res = await request(t.http).post(`${gated.path}/data`).set(bearer(editor)).send({ id: 'p1', values: { name: 'Pending' } }).expect(201);
    expect(res.body.payload.request).toMatchObject({ merged: false, pendingApproval: true, requestStatus: 'open' });
    await request(t.http).get(`${gated.path}/data/p1`).set(bearer(owner)).expect(404);
    const reqId = res.body.payload.request.requestId;
    // The approvals module's gate (docs/approvals.md): managers too need an approved approval instance.
    await request(t.http).post(`${gated.path}/requests/${reqId}/merge`).set(bearer(editor)).expect(409);
    const gate = await request(t.http).post(`${gated.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(409);
    expect(gate.body).toMatchObject({ code: 'APPROVAL_REQUIRED', payload: { requestId: reqId, instanceId: null, status: null } });
    await request(t.http).get(`${gated.path}/data/p1`).set(bearer(owner)).expect(404);
    // The deprecated apply does not pass the gate either: the write waits for its approval like any other.
    const direct = await request(t.http).post(`${gated.path}/data?apply=true`).set(bearer(owner)).send({ id: 'p2', values: { name: 'Direct' } }).expect(201);
    expect(direct.body.payload.request).toMatchObject({ merged: false, pendingApproval: true, requestStatus: 'open' });
    expect(direct.headers['x-api-deprecated']).toBe('true');
    await request(t.http).get(`${gated.path}/data/p2`).set(bearer(owner)).expect(404);
    for (const [method, path, body] of [
      ['put', `${gated.path}/data/p0?apply=true`, { values: { name: 'Changed' } }],
      ['post', `${gated.path}/data/bulk?apply=true`, [{ target: { row: 'p0' }, value: { name: { text: 'Bulk' } } }]],
    ] as const) {
      const res = await request(t.http)[method](path).set(bearer(editor)).send(body).expect(200);
      expect(res.body.payload.request ?? res.body.payload).toMatchObject({ merged: false });
    }
    expect(valueOf((await request(t.http).get(`${gated.path}/data/p0`).set(bearer(owner)).expect(200)).body.payload, 'name')).toEqual({ text: 'Before' });
  });

  it('lets an editor send row changes but not metadata or settings changes, in a request or by a revert', async () => {
    const own = await createDocument(t.http, owner);
    const before = await request(t.http).get(`${own.path}/metadata`).set(bearer(owner)).expect(200);
    const changes = [
      { type: 'field-delete', target: { kind: 'field', fieldId: 'code' } },
      { type: 'metadata-update', target: { kind: 'metadata' }, newValue: { fields: [{ id: 'name', name: 'Name', type: 'text' }] } },
      { type: 'settings-update', target: { kind: 'settings' }, newValue: { workflow: { requiresApproval: true } } },
    ];
    for (const change of changes) {
      const refused = await request(t.http).post(`${own.path}/requests`).set(bearer(editor)).send({ title: 'structure', changes: [change] }).expect(403);
      expect(refused.body.code).toBe('FORBIDDEN');
    }
    const rows = await request(t.http)
      .post(`${own.path}/requests`)
      .set(bearer(editor))
      .send({ title: 'rows', changes: [{ type: 'row-create', target: { kind: 'row', rowId: 'e1' }, newValue: { values: { name: { text: 'E1' } } } }] })
      .expect(201);
    expect(rows.body.payload.status).toBe('open');
    // The owner removes a field; the editor may not undo that by reverting the revision.
    const trimmed = await request(t.http)
      .put(`${own.path}/metadata`)
      .set(bearer(owner))
      .send({ fields: before.body.payload.fields.filter((field: { id: string }) => field.id !== 'code') })
      .expect(200);
    const revert = await request(t.http).post(`${own.path}/revisions/${trimmed.body.payload.request.revisionId}/revert`).set(bearer(editor)).expect(403);
    expect(revert.body.code).toBe('FORBIDDEN');
    const after = await request(t.http).get(`${own.path}/metadata`).set(bearer(owner)).expect(200);
    expect(after.body.payload.fields.map((field: { id: string }) => field.id)).not.toContain('code');
    const open = await request(t.http).get(`${own.path}/requests?status=open`).set(bearer(owner)).expect(200);
    expect(open.body.payload.items.map((item: { title: string }) => item.title)).toEqual(['rows']);
  });

  it('refuses a viewer creating or merging requests and hides requests from other tenants', async () => {
    const viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    await request(t.http).post(`${doc.path}/requests`).set(bearer(viewer)).send({ title: 'x' }).expect(403);
    const reqId = await openRequest(owner);
    await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(viewer)).expect(403);
    const stranger = await newUser(t.http);
    const res = await request(t.http).get(`${doc.path}/requests/${reqId}`).set(bearer(stranger)).expect(404);
    expect(res.body.code).toBe('DOC_NOT_FOUND');
    await request(t.http).get(`${doc.path}/revisions`).set(bearer(stranger)).expect(404);
  });

  it('every request and revision carries its changes: 1000 inline on one, the first 100 on each list item', async () => {
    const bulkDoc = await createDocument(t.http, owner);
    await seedRows(t.dataSource, bulkDoc, Array.from({ length: 150 }, (_v, i) => ({ id: `b${i}`, values: {} })));
    const bulk = Array.from({ length: 150 }, (_v, i) => ({ target: { row: `b${i}` }, value: { qty: i } }));
    const written = await request(t.http).post(`${bulkDoc.path}/data/bulk`).set(bearer(owner)).send(bulk).expect(200);
    const { requestId, revisionId } = written.body.payload;

    const requests = await request(t.http).get(`${bulkDoc.path}/requests`).set(bearer(owner)).expect(200);
    const listed = requests.body.payload.items.find((item: { id: string }) => item.id === requestId);
    expect(listed).toMatchObject({ status: 'merged', changeCount: 150 });
    expect(listed.changes).toHaveLength(100);
    expect(listed.changes[0]).toMatchObject({ type: 'row-update', operation: 'update', targetId: 'b0', changedBy: owner.id });
    const one = await request(t.http).get(`${bulkDoc.path}/requests/${requestId}`).set(bearer(owner)).expect(200);
    expect(one.body.payload.changes).toHaveLength(150);

    const revisions = await request(t.http).get(`${bulkDoc.path}/revisions`).set(bearer(owner)).expect(200);
    const listedRevision = revisions.body.payload.items.find((item: { id: string }) => item.id === revisionId);
    expect(listedRevision).toMatchObject({ requestId, operationCount: 150 });
    expect(listedRevision.changes).toHaveLength(100);
    expect(listedRevision.changes[0]).toMatchObject({ type: 'row-update', target: { kind: 'row', rowId: 'b0' } });
    const bundle = await request(t.http).get(`${bulkDoc.path}?include=revisions`).set(bearer(owner)).expect(200);
    expect(bundle.body.payload.revisions.find((item: { id: string }) => item.id === revisionId).changes).toHaveLength(100);

    // Close, reopen and merge answer with the request's changes, the merge also with its revision's operations.
    const reqId = await openRequest(owner, 'Carries changes');
    await request(t.http).put(`${doc.path}/data/base?requestId=${reqId}`).set(bearer(owner)).send({ values: { name: 'Renamed' } }).expect(200);
    const closed = await request(t.http).post(`${doc.path}/requests/${reqId}/close`).set(bearer(owner)).expect(200);
    expect(closed.body.payload.changes).toEqual([expect.objectContaining({ type: 'row-update', targetId: 'base' })]);
    const reopened = await request(t.http).post(`${doc.path}/requests/${reqId}/reopen`).set(bearer(owner)).expect(200);
    expect(reopened.body.payload.changes).toHaveLength(1);
    const merged = await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(200);
    expect(merged.body.payload.changes).toHaveLength(1);
    expect(merged.body.payload.revision.changes).toEqual([expect.objectContaining({ type: 'row-update', target: { kind: 'row', rowId: 'base' } })]);
  });

  it('keeps the changes of a request merged at once on the request, those of a request left open as rows; both read alike', async () => {
    const inlineDoc = await createDocument(t.http, owner);
    await seedRows(t.dataSource, inlineDoc, [
      { id: 'i1', values: {} },
      { id: 'i2', values: {} },
    ]);
    const bulk = [
      { target: { row: 'i1' }, value: { qty: 1 } },
      { target: { row: 'i2' }, value: { qty: 2 } },
    ];
    const written = await request(t.http).post(`${inlineDoc.path}/data/bulk`).set(bearer(owner)).send(bulk).expect(200);
    const { requestId } = written.body.payload;
    const storedAs = `SELECT (SELECT count(*)::int FROM request_changes c WHERE c.request_id = q.id) AS "rows", json_array_length(q.inline_changes) AS "inline"
                        FROM requests q WHERE q.id = $1`;
    expect(await t.dataSource.query(storedAs, [requestId])).toEqual([{ rows: 0, inline: 2 }]);
    const merged = (await request(t.http).get(`${inlineDoc.path}/requests/${requestId}`).set(bearer(owner)).expect(200)).body.payload;
    expect(merged).toMatchObject({ status: 'merged', changeCount: 2 });
    expect(merged.changes.map((change: { targetId: string }) => change.targetId)).toEqual(['i1', 'i2']);
    expect(merged.changes[1]).toMatchObject({ type: 'row-update', operation: 'update', changedBy: owner.id, changedAt: merged.createdAt });
    expect(merged.changes[1].id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(merged.changes[0].id).not.toBe(merged.changes[1].id);
    const listed = (await request(t.http).get(`${inlineDoc.path}/requests`).set(bearer(owner)).expect(200)).body.payload.items;
    expect(listed.find((item: { id: string }) => item.id === requestId).changes).toEqual(merged.changes);

    // Waiting for approval, the request can still change: its changes are rows, read the same way.
    const gated = await createDocument(t.http, owner, { settings: { workflow: { requiresApproval: true } } });
    const pending = await request(t.http).post(`${gated.path}/data`).set(bearer(owner)).send({ id: 'g1', values: { name: 'Gated' } }).expect(201);
    const pendingId = pending.body.payload.request.requestId;
    expect(await t.dataSource.query(storedAs, [pendingId])).toEqual([{ rows: 1, inline: null }]);
    const open = (await request(t.http).get(`${gated.path}/requests/${pendingId}`).set(bearer(owner)).expect(200)).body.payload;
    expect(open).toMatchObject({ status: 'open', changeCount: 1 });
    expect(open.changes).toEqual([expect.objectContaining({ type: 'row-create', operation: 'create', targetId: 'g1', changedBy: owner.id })]);
  });
});
