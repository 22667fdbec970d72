import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createDocument, createRow } from '../documents/documents.fixtures.js';

const API = '/api/v1';
const NUL = '\u0000';

/**
 * Findings of an OpenAPI-driven input fuzz (every body property as null, the wrong JSON type, huge, NUL, lone
 * surrogates …; duplicate and bracketed query parameters; malformed path ids): each refusal is the envelope of a
 * documented code naming the field at fault (docs/errors.md), and a refused write changes nothing.
 */
describe('input fuzz findings', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await registerUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  function refusedNaming(res: request.Response, field: string, reason: string | RegExp): void {
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    expect(problemsOf(res.body)).toContainEqual(expect.objectContaining({ field, reason: expect.stringMatching(reason) }));
  }

  it('refuses U+0000 in a text property of a body or query naming the field, and writes nothing', async () => {
    const org = owner.defaultOrganizationId;
    const nul = /NUL character \(U\+0000\)/;
    const me = (await request(t.http).get(`${API}/users/me`).set(bearer(owner)).expect(200)).body.payload;
    const orgBefore = (await request(t.http).get(`${API}/organizations/${org}`).set(bearer(owner)).expect(200)).body.payload;

    refusedNaming(
      await request(t.http).patch(`${API}/users/me`).set(bearer(owner)).send({ displayName: `a${NUL}b` }),
      'displayName',
      nul,
    );
    refusedNaming(
      await request(t.http).patch(`${API}/organizations/${org}`).set(bearer(owner)).send({ description: `d${NUL}` }),
      'description',
      nul,
    );
    refusedNaming(
      await request(t.http)
        .post(`${API}/webhooks`)
        .set(bearer(owner))
        .send({ organizationId: org, name: `h${NUL}`, url: 'http://127.0.0.1:9/hook', events: ['*'] }),
      'name',
      nul,
    );
    // A text array item and a nested DTO's text are named by their paths.
    refusedNaming(
      await request(t.http)
        .post(`${API}/oauth/clients`)
        .set(bearer(owner))
        .send({ name: 'c', redirectUris: ['https://example.test/cb', `https://example.test/${NUL}`], allowedScopes: ['doc:read'] }),
      'redirectUris[1]',
      nul,
    );
    refusedNaming(
      await request(t.http).get(`${API}/organizations/${org}/members?search=a%00b`).set(bearer(owner)),
      'search',
      nul,
    );

    expect((await request(t.http).get(`${API}/users/me`).set(bearer(owner)).expect(200)).body.payload).toEqual(me);
    expect((await request(t.http).get(`${API}/organizations/${org}`).set(bearer(owner)).expect(200)).body.payload).toEqual(orgBefore);
    const hooks = await request(t.http).get(`${API}/webhooks`).set(bearer(owner)).expect(200);
    expect(hooks.body.payload.items).toEqual([]);
  });

  it('refuses an unknown key beside updates or rows in a bulk body (it was ignored) and applies nothing', async () => {
    const doc = await createDocument(t.http, owner);
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'one', qty: 1 } });
    const row = async () => (await request(t.http).get(`${doc.path}/data/r1`).set(bearer(owner)).expect(200)).body.payload;
    const revisions = async () => (await request(t.http).get(`${doc.path}/revisions`).set(bearer(owner)).expect(200)).body.payload;
    const [rowBefore, revisionsBefore] = [await row(), await revisions()];

    const unknown = /unknown key/;
    refusedNaming(
      await request(t.http)
        .post(`${doc.path}/data/bulk`)
        .set(bearer(owner))
        .send({ updates: [{ target: { row: 'r1', field: 'qty' }, value: 2 }], requestTitle: 'x' }),
      'requestTitle',
      unknown,
    );
    refusedNaming(
      await request(t.http)
        .post(`${doc.path}/rows/batch-update`)
        .set(bearer(owner))
        .send({ rows: [{ target: { row: 'r1' }, values: { qty: 3 } }], verison: 1 }),
      'verison',
      unknown,
    );
    // Both forms at once: `rows` used to be dropped silently behind `updates`.
    refusedNaming(
      await request(t.http)
        .post(`${doc.path}/data/bulk`)
        .set(bearer(owner))
        .send({ updates: [{ target: { row: 'r1', field: 'qty' }, value: 4 }], rows: [{ target: { row: 'r1' }, values: { name: 'x' } }] }),
      'rows',
      unknown,
    );

    expect(await row()).toEqual(rowBefore);
    expect(await revisions()).toEqual(revisionsBefore);
    // The documented forms still write.
    await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send({ updates: [{ target: { row: 'r1', field: 'qty' }, value: 5 }] })
      .expect(200);
  });

  it('refuses a row-time operand in year 0000 naming the condition (PostgreSQL has no year 0: it answered without a field)', async () => {
    const doc = await createDocument(t.http, owner, {
      fields: [
        { id: 'name', name: 'Name', type: 'text' },
        { id: 'created', name: 'Created', type: 'created_time' },
      ],
    });
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'one' } });
    const query = (field: string, condition: Record<string, unknown>) =>
      request(t.http)
        .post(`${doc.path}/data/query`)
        .set(bearer(owner))
        .send({ filters: { logic: 'and', conditions: [{ field, ...condition }], groups: [] } });

    const year0 = /ISO 8601 date-time/;
    refusedNaming(await query('createdAt', { operator: 'gt', value: '0000-06-01' }), 'filters.conditions[0].value', year0);
    refusedNaming(await query('created', { operator: 'eq', value: '0000-01-01T00:00:00Z' }), 'filters.conditions[0].value', year0);
    refusedNaming(
      await query('updatedAt', { operator: 'range', rangeStart: '0001-01-01T00:30:00+01:00' }),
      'filters.conditions[0].rangeStart',
      year0,
    );
    // Year 0001 is PostgreSQL's first: still a valid operand.
    const found = await query('createdAt', { operator: 'gt', value: '0001-01-01' }).expect(200);
    expect(found.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['r1']);
  });

  it('refuses an unknown key in a value entry and a NUL in a bulk target naming them (both were ignored or unnamed)', async () => {
    const doc = await createDocument(t.http, owner, { properties: [{ id: 'supplier', name: 'Supplier', type: 'text' }] });
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'one', qty: 1 } });
    const snapshot = async () => [
      (await request(t.http).get(`${doc.path}/data/r1`).set(bearer(owner)).expect(200)).body.payload,
      (await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200)).body.payload,
      (await request(t.http).get(`${doc.path}/revisions`).set(bearer(owner)).expect(200)).body.payload,
    ];
    const before = await snapshot();

    const unknown = /unknown key/;
    refusedNaming(
      await request(t.http)
        .put(`${doc.path}/data/r1`)
        .set(bearer(owner))
        .send({ values: [{ fieldId: 'qty', value: 3, version: 1 }] }),
      'values[0].version',
      unknown,
    );
    refusedNaming(
      await request(t.http)
        .patch(`${doc.path}/properties`)
        .set(bearer(owner))
        .send({ properties: [{ fieldId: 'supplier', value: 'Acme', valeu: 'x' }] }),
      'properties[0].valeu',
      unknown,
    );
    refusedNaming(
      await request(t.http)
        .post(`${doc.path}/data/bulk`)
        .set(bearer(owner))
        .send([{ target: { row: 'r1' }, value: [{ fieldId: 'qty', value: 4, extra: true }] }]),
      '[0].value[0].extra',
      unknown,
    );
    refusedNaming(
      await request(t.http)
        .post(`${doc.path}/data/bulk`)
        .set(bearer(owner))
        .send({ updates: [{ target: { row: `r1${NUL}`, field: 'qty' }, value: 5 }] }),
      'updates[0].target.row',
      /row id/,
    );

    expect(await snapshot()).toEqual(before);
  });

  it('queries a NOW()/TODAY() formula over a date in year 0000 (the database cast failed every such query)', async () => {
    const doc = await createDocument(t.http, owner, {
      fields: [
        { id: 'name', name: 'Name', type: 'text' },
        { id: 'due', name: 'Due', type: 'date' },
        { id: 'at', name: 'At', type: 'datetime' },
        { id: 'age', name: 'Age', type: 'formula', formula: 'DATEDIFF({due}, TODAY())' },
        { id: 'since', name: 'Since', type: 'formula', formula: 'DATEDIFF({at}, NOW())' },
      ],
    });
    await createRow(t.http, owner, doc, { id: 'old', values: { name: 'old', due: '0000-03-01', at: '0000-02-29T12:00:00Z' } });
    await createRow(t.http, owner, doc, { id: 'new', values: { name: 'new', due: '2000-01-01', at: '2000-01-01T00:00:00Z' } });
    const query = (body: Record<string, unknown>) => request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send(body);
    const ids = (res: request.Response) => res.body.payload.items.map((row: { id: string }) => row.id);

    const older = await query({ filters: { logic: 'and', conditions: [{ field: 'age', operator: 'gt', value: 700000 }], groups: [] } }).expect(200);
    expect(ids(older)).toEqual(['old']);
    const sorted = await query({ sorts: [{ field: 'since', direction: 'desc' }] }).expect(200);
    expect(ids(sorted)).toEqual(['old', 'new']);
    // The filter reads the formula as a read shows it: the same number of days.
    const read = (await request(t.http).get(`${doc.path}/data/old`).set(bearer(owner)).expect(200)).body.payload;
    const age = read.values.find((entry: { fieldId: string }) => entry.fieldId === 'age').value.number as number;
    const exact = await query({ filters: { logic: 'and', conditions: [{ field: 'age', operator: 'eq', value: age }], groups: [] } }).expect(200);
    expect(ids(exact)).toEqual(['old']);
  });

  it('filters and sorts a NOW()/TODAY() date formula of year 0000 as year 0000 (its text read as 0001)', async () => {
    const doc = await createDocument(t.http, owner, {
      fields: [
        { id: 'due', name: 'Due', type: 'date' },
        { id: 'd2', name: 'D2', type: 'formula', formula: 'IF({due} < TODAY(), {due}, {due})' },
      ],
    });
    await createRow(t.http, owner, doc, { id: 'y0', values: { due: '0000-06-01' } });
    await createRow(t.http, owner, doc, { id: 'y1', values: { due: '0001-03-01' } });
    const query = (body: Record<string, unknown>) => request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send(body);
    const ids = (res: request.Response) => res.body.payload.items.map((row: { id: string }) => row.id);

    expect(ids(await query({ sorts: [{ field: 'd2', direction: 'asc' }] }).expect(200))).toEqual(['y0', 'y1']);
    expect(ids(await query({ sorts: [{ field: 'd2', direction: 'desc' }] }).expect(200))).toEqual(['y1', 'y0']);
    const before1 = await query({ filters: { logic: 'and', conditions: [{ field: 'd2', operator: 'lt', value: '0001-01-01' }], groups: [] } }).expect(200);
    expect(ids(before1)).toEqual(['y0']);
    const read = (await request(t.http).get(`${doc.path}/data/y0`).set(bearer(owner)).expect(200)).body.payload;
    expect(JSON.stringify(read.values.find((entry: { fieldId: string }) => entry.fieldId === 'd2').value)).toContain('0000-06-01');
  });
});
