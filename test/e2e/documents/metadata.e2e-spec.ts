import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, createRow, type DocHandle, newUser, valueOf } from './documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'amount', name: 'Amount', type: 'text' },
  { id: 'note', name: 'Note', type: 'long_text' },
  { id: 'color', name: 'Color', type: 'single_select', selectOptions: [{ id: 'r', label: 'Red' }, { id: 'g', label: 'Green' }] },
];

/** Fields as the API shows them: spec 2.5's required, unique and defaultValue always present. */
const shown = (fields: Record<string, unknown>[]): Record<string, unknown>[] =>
  fields.map((field) => ({ required: false, unique: false, defaultValue: null, ...field }));

describe('documents: metadata', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    doc = await createDocument(t.http, owner, { fields: FIELDS, properties: [{ id: 'region', name: 'Region', type: 'text' }] });
    await createRow(t.http, owner, doc, { id: 'a', values: { name: 'A', amount: '12.5', note: 'keep me', color: 'r' } });
    await createRow(t.http, owner, doc, { id: 'b', values: { name: 'B', amount: 'lots', note: 'me too', color: 'g' } });
    await createRow(t.http, owner, doc, { id: 'c', values: { name: 'C', amount: '7' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('returns fields and properties with every attribute', async () => {
    const res = await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200);
    expect(res.body.payload.fields).toEqual(shown(FIELDS));
    expect(res.body.payload.properties).toEqual(shown([{ id: 'region', name: 'Region', type: 'text' }]));
    expect(res.body.payload.version).toBe(1);
  });

  it('diffs a PUT into field operations, converts a type change and reports what could not convert', async () => {
    const next = [
      { id: 'name', name: 'Title', type: 'text', required: true },
      { id: 'amount', name: 'Amount', type: 'number' },
      { id: 'color', name: 'Color', type: 'single_select', selectOptions: [{ id: 'r', label: 'Red' }] },
      { id: 'done', name: 'Done', type: 'boolean', defaultValue: { boolean: false } },
      { id: 'n', name: 'No.', type: 'auto_number' },
    ];
    const res = await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields: next }).expect(200);
    expect(res.body.payload.fields).toEqual(shown(next));
    expect(res.body.payload.request).toMatchObject({ merged: true });
    const conversions = Object.fromEntries(res.body.payload.conversions.map((c: { fieldId: string }) => [c.fieldId, c]));
    expect(conversions.amount).toMatchObject({ fromType: 'text', toType: 'number', converted: 2, failed: 1, failedRowIds: ['b'] });
    expect(conversions.color).toMatchObject({ converted: 1, failed: 1, failedRowIds: ['b'] });

    const a = await request(t.http).get(`${doc.path}/data/a`).set(bearer(owner)).expect(200);
    expect(valueOf(a.body.payload, 'amount')).toEqual({ number: 12.5 });
    expect(valueOf(a.body.payload, 'note')).toBeUndefined();
    expect(valueOf(a.body.payload, 'n')).toEqual({ number: 1 });
    const b = await request(t.http).get(`${doc.path}/data/b`).set(bearer(owner)).expect(200);
    expect(valueOf(b.body.payload, 'amount')).toBeUndefined();
    expect(valueOf(b.body.payload, 'n')).toEqual({ number: 2 });

    const revision = await request(t.http).get(`${doc.path}/revisions/${res.body.payload.request.revisionId}`).set(bearer(owner)).expect(200);
    expect(revision.body.payload.stats).toMatchObject({ fieldsCreated: 2, fieldsUpdated: 3, fieldsDeleted: 1 });
    const ops = revision.body.payload.changes;
    const deleted = ops.find((op: { type: string }) => op.type === 'field-delete');
    expect(deleted).toMatchObject({ target: { kind: 'field', fieldId: 'note' }, newValue: null });
    expect(deleted.oldValue.field).toMatchObject({ id: 'note', type: 'long_text' });
    expect(deleted.oldValue.values).toEqual({ a: 'keep me', b: 'me too' });
    const converted = ops.find((op: { type: string; target: { fieldId: string } }) => op.type === 'field-update' && op.target.fieldId === 'amount');
    expect(converted.oldValue.values).toEqual({ a: '12.5', b: 'lots', c: '7' });
    expect(JSON.parse(converted.note).conversion).toMatchObject({ failed: 1 });

    const created = await createRow(t.http, owner, doc, { id: 'd', values: { name: 'D' } });
    expect(valueOf(created as never, 'n')).toEqual({ number: 4 });
    expect(valueOf(created as never, 'done')).toEqual({ boolean: false });

    const events = await t.dataSource.query<{ event_type: string; payload: { field?: { id: string } } }[]>(
      `SELECT event_type, payload FROM outbox WHERE doc_id = $1 AND event_type LIKE 'metadata%' ORDER BY seq`,
      [doc.docId],
    );
    const summary = events.map((event) => `${event.event_type}:${event.payload.field?.id ?? ''}`);
    // metadata_updated names the first change (the created field), each change also has its own event.
    expect(summary).toEqual(expect.arrayContaining(['metadata_updated:done', 'metadata_field_added:done', 'metadata_field_updated:amount', 'metadata_field_deleted:note']));
    const added = events.find((event) => event.event_type === 'metadata_field_added');
    expect(added?.payload).toMatchObject({ field: { id: expect.any(String), name: expect.any(String), type: expect.any(String), required: false }, updatedBy: owner.id, updatedAt: expect.any(String) });
    expect([...events].reverse().find((event) => event.event_type === 'metadata_updated')?.payload).toMatchObject({ field: { id: 'done', type: expect.any(String) }, updatedBy: owner.id });

    // An update that changes one field names it in metadata_updated too.
    const fresh = await createDocument(t.http, owner);
    const current = await request(t.http).get(`${fresh.path}/metadata`).set(bearer(owner)).expect(200);
    const fields = [...current.body.payload.fields, { id: 'extra', name: 'Extra', type: 'text' }];
    await request(t.http).put(`${fresh.path}/metadata`).set(bearer(owner)).send({ fields, properties: current.body.payload.properties }).expect(200);
    const [single] = await t.dataSource.query<{ payload: Record<string, unknown> }[]>(
      `SELECT payload FROM outbox WHERE doc_id = $1 AND event_type = 'metadata_updated' ORDER BY seq DESC LIMIT 1`,
      [fresh.docId],
    );
    expect(single.payload).toMatchObject({ field: { id: 'extra', name: 'Extra', type: 'text', required: false }, updatedBy: owner.id, updatedAt: expect.any(String) });
  });

  it('drops only a removed option from multi_select values; a value left empty is reported as failed', async () => {
    const options = [{ id: 'o1', label: 'One' }, { id: 'o2', label: 'Two' }];
    const multi = await createDocument(t.http, owner, { docType: 'multi', fields: [{ id: 'm', name: 'M', type: 'multi_select', selectOptions: options }] });
    await createRow(t.http, owner, multi, { id: 'both', values: { m: ['o1', 'o2'] } });
    await createRow(t.http, owner, multi, { id: 'two', values: { m: ['o2'] } });
    await createRow(t.http, owner, multi, { id: 'one', values: { m: ['o1'] } });
    const res = await request(t.http)
      .put(`${multi.path}/metadata`)
      .set(bearer(owner))
      .send({ fields: [{ id: 'm', name: 'M', type: 'multi_select', selectOptions: [options[1]] }] })
      .expect(200);
    expect(res.body.payload.conversions).toEqual([expect.objectContaining({ fieldId: 'm', converted: 2, failed: 1, failedRowIds: ['one'] })]);
    const rows = await request(t.http).get(`${multi.path}/data`).set(bearer(owner)).expect(200);
    const byId = Object.fromEntries(rows.body.payload.items.map((row: { id: string }) => [row.id, valueOf(row as never, 'm')]));
    expect(byId).toEqual({ both: { multiSelect: [{ id: 'o2', label: 'Two' }] }, two: { multiSelect: [{ id: 'o2', label: 'Two' }] }, one: undefined });
  });

  it('refuses properties of row-only types, naming each', async () => {
    const current = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    const rowOnly = ['created_time', 'updated_time', 'created_by', 'updated_by', 'auto_number'];
    const res = await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ fields: current.fields, properties: [...current.properties, ...rowOnly.map((type) => ({ id: `p_${type}`, name: type, type }))] })
      .expect(400);
    expect(problemsOf(res.body)).toEqual(rowOnly.map((type, i) => expect.objectContaining({ fieldId: `p_${type}`, field: `properties[${current.properties.length + i}].type` })));
    const after = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    expect(after.properties).toEqual(current.properties);
  });

  it('refuses invalid definitions with VALIDATION_ERROR and changes nothing', async () => {
    const cases = [
      { fields: [{ id: 'x', name: 'X', type: 'spreadsheet' }] },
      // An existing field retyped to a type the service does not know (was a 500).
      { fields: [{ id: 'name', name: 'Name', type: 'bogus' }] },
      { fields: [{ id: 'x', name: 'X', type: 'text' }, { id: 'x', name: 'Y', type: 'text' }] },
      { fields: [{ id: 'bad id!', name: 'X', type: 'text' }] },
      { fields: [{ id: 'r', name: 'R', type: 'number', validations: [{ ruleType: 'pattern', config: { pattern: '(' } }] }] },
      // Rules that cannot judge the type's values (they were kept and never applied), and rules without their bound.
      { fields: [{ id: 'r', name: 'R', type: 'number', validations: [{ ruleType: 'pattern', config: { pattern: '^1' } }] }] },
      { fields: [{ id: 'r', name: 'R', type: 'text', validations: [{ ruleType: 'min', config: { value: 5 } }] }] },
      { fields: [{ id: 'r', name: 'R', type: 'boolean', validations: [{ ruleType: 'maxLength', config: { value: 0 } }] }] },
      { fields: [{ id: 'r', name: 'R', type: 'number', validations: [{ ruleType: 'min', config: {} }] }] },
      { fields: [{ id: 'r', name: 'R', type: 'text', validations: [{ ruleType: 'maxLength' }] }] },
      { properties: [] },
    ];
    for (const body of cases) {
      const res = await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send(body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'VALIDATION_ERROR' });
    }
    const current = await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200);
    expect(current.body.payload.fields.map((f: { id: string }) => f.id)).toEqual(['name', 'amount', 'color', 'done', 'n']);
  });

  it('refuses a field attribute spec 2.5 does not name (a misspelt required was dropped: the field was not required), naming it', async () => {
    const before = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    const fields = [...before.fields, { id: 'sku2', name: 'SKU', type: 'text', requird: true }];
    const res = await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields }).expect(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: `fields[${before.fields.length}].requird`, fieldId: 'sku2' } });
    const properties = await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ fields: before.fields, properties: [{ id: 'region', name: 'Region', type: 'text', hidden: true }] })
      .expect(400);
    expect(properties.body.details).toMatchObject({ field: 'properties[0].hidden' });
    const created = await request(t.http)
      .post(`/api/v1/doc/${doc.docType}`)
      .set(bearer(owner))
      .send({ id: 'attr-typo', workspaceId: owner.defaultWorkspaceId, metadata: { fields: [{ id: 'a', name: 'A', type: 'text', uniqe: true }] } })
      .expect(400);
    expect(created.body.details).toMatchObject({ field: 'metadata.fields[0].uniqe' });
    const after = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    expect(after).toEqual(before);
    // What GET answers is accepted back unchanged (resultType of a formula included).
    await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields: after.fields, properties: after.properties }).expect(200);
  });

  it('refuses a metadata key other than fields and properties in a metadata-update change and on document creation, as PUT does', async () => {
    const before = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    const put = await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields: before.fields, propertys: [] }).expect(400);
    expect(put.body.details).toMatchObject({ field: 'propertys' });
    // The same misspelt key used to be ignored here: the request recorded no property definitions without a word.
    const change = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'Typo', changes: [{ type: 'metadata-update', target: { kind: 'metadata' }, newValue: { fields: before.fields, propertys: [] } }] })
      .expect(400);
    expect(change.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'changes[0].propertys' } });
    const created = await request(t.http)
      .post(`/api/v1/doc/${doc.docType}`)
      .set(bearer(owner))
      .send({ id: 'meta-typo', workspaceId: owner.defaultWorkspaceId, metadata: { fields: [], propertys: [{ id: 'p', name: 'P', type: 'text' }] } })
      .expect(400);
    expect(created.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'metadata.propertys' } });
    await request(t.http).get(`/api/v1/doc/${doc.docType}/meta-typo?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).expect(404);
  });

  it('checks the version a metadata-update change names, as PUT /metadata does', async () => {
    const read = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    const withVersion = (version: unknown) =>
      request(t.http)
        .post(`${doc.path}/requests`)
        .set(bearer(owner))
        .send({ title: 'As read', changes: [{ type: 'metadata-update', target: { kind: 'metadata' }, newValue: { ...read, fields: [...read.fields, { id: `v${String(version)}`, name: 'V', type: 'text' }], version } }] });
    const stale = await withVersion(read.version - 1);
    expect([stale.status, stale.body.code, stale.body.payload]).toEqual([409, 'VERSION_CONFLICT', { currentVersion: read.version, yourVersion: read.version - 1 }]);
    expect((await withVersion('x')).status).toBe(400);
    const current = await withVersion(read.version).expect(201);
    await request(t.http).post(`${doc.path}/requests/${current.body.payload.id}/close`).set(bearer(owner)).expect(200);
  });

  it('takes an enum rule with its values under config.enum (keyed by the rule, as config.pattern) and enforces it', async () => {
    const fields = [{ id: 'size', name: 'Size', type: 'text', validations: [{ ruleType: 'enum', config: { enum: ['S', 'M'] }, message: { en: 'S or M' } }] }];
    const enumDoc = await createDocument(t.http, owner, { fields });
    await createRow(t.http, owner, enumDoc, { id: 's', values: { size: 'S' } });
    const res = await request(t.http).post(`${enumDoc.path}/data`).set(bearer(owner)).send({ id: 'x', values: { size: 'XL' } }).expect(400);
    expect(problemsOf(res.body)).toEqual([expect.objectContaining({ fieldId: 'size', reason: 'value is not one of the allowed values', message: { en: 'S or M' } })]);
  });

  it('refuses making a field unique while rows share a value', async () => {
    await createRow(t.http, owner, doc, { id: 'e', values: { name: 'D' } });
    const current = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body.payload.fields;
    const fields = current.map((field: { id: string }) => (field.id === 'name' ? { ...field, unique: true } : field));
    const res = await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields }).expect(400);
    expect(res.body.details).toMatchObject({ fieldId: 'name' });
  });

  it('needs manage permission: an editor may write rows but not change metadata', async () => {
    const current = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(editor)).expect(200)).body.payload.fields;
    const res = await request(t.http).put(`${doc.path}/metadata`).set(bearer(editor)).send({ fields: current }).expect(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });

  it('records a metadata change on a request; the draft shows it and the merge applies it', async () => {
    const current = (await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200)).body.payload;
    const open = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: 'add field' }).expect(201);
    const reqId = open.body.payload.id;
    const fields = [...current.fields, { id: 'extra', name: 'Extra', type: 'percent' }];
    const put = await request(t.http).put(`${doc.path}/metadata?requestId=${reqId}`).set(bearer(owner)).send({ fields }).expect(200);
    expect(put.body.payload.request).toMatchObject({ merged: false, requestId: reqId });
    expect(put.body.payload.fields.map((f: { id: string }) => f.id)).toContain('extra');
    const live = await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200);
    expect(live.body.payload.fields.map((f: { id: string }) => f.id)).not.toContain('extra');
    await request(t.http).post(`${doc.path}/data?requestId=${reqId}`).set(bearer(owner)).send({ id: 'x1', values: { name: 'X', extra: 50 } }).expect(201);
    const merged = await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(200);
    expect(merged.body.payload.revision.stats).toMatchObject({ fieldsCreated: 1, rowsCreated: 1 });
    const row = await request(t.http).get(`${doc.path}/data/x1`).set(bearer(owner)).expect(200);
    expect(valueOf(row.body.payload, 'extra')).toEqual({ number: 50 });
  });
});
