import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, newUser } from './documents.fixtures.js';

/** Property formulas aggregating rows (docs/formulas.md): a runtime error leaves the value empty, never fails a call. */
describe('property aggregates: beyond the double range, over formulas computed at read time', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers a sum past 1.8e308 as an empty value on reads and on the answer of a property write', async () => {
    const doc = await createDocument(t.http, owner, { docType: 'huge', fields: [{ id: 'amount', name: 'Amount', type: 'number' }] });
    await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({
        fields: [{ id: 'amount', name: 'Amount', type: 'number' }],
        properties: [
          { id: 'budget', name: 'Budget', type: 'number' },
          { id: 'spent', name: 'Spent', type: 'formula', formula: 'SUM({amount})' },
          { id: 'mean', name: 'Mean', type: 'formula', formula: 'AVG({amount})' },
        ],
      })
      .expect(200);
    await createRow(t.http, owner, doc, { id: 'a', values: { amount: 1e308 } });
    await createRow(t.http, owner, doc, { id: 'b', values: { amount: 1e308 } });
    const valueOf = (body: { properties: { fieldId: string; value: unknown }[] }, fieldId: string): unknown =>
      body.properties.find((entry) => entry.fieldId === fieldId)?.value ?? null;

    const read = await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200);
    expect(valueOf(read.body.payload, 'spent')).toBeNull();
    expect(valueOf(read.body.payload, 'mean')).toEqual({ number: 1e308 });
    const written = await request(t.http).patch(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { budget: 5 } }).expect(200);
    expect(valueOf(written.body.payload, 'budget')).toEqual({ number: 5 });
    expect(valueOf(written.body.payload, 'spent')).toBeNull();
  });

  // A NOW()/TODAY() formula is never stored (docs/formulas.md): aggregating its stored values read nothing, so the
  // total of `DATEDIFF({due}, TODAY())` over late rows was always 0.
  it('aggregates a formula reading TODAY() over the values rows show, on reads and in the export', async () => {
    const day = (offset: number): string => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const doc = await createDocument(t.http, owner, {
      docType: 'late',
      fields: [
        { id: 'due', name: 'Due', type: 'date' },
        { id: 'late', name: 'Late', type: 'formula', formula: 'DATEDIFF({due}, TODAY())' },
      ],
      properties: [
        { id: 'total', name: 'Total', type: 'formula', formula: 'SUM({late})' },
        { id: 'mean', name: 'Mean', type: 'formula', formula: 'AVG({late})' },
        { id: 'count', name: 'Count', type: 'formula', formula: 'COUNT({late})' },
      ],
    });
    await createRow(t.http, owner, doc, { id: 'a', values: { due: day(-10) } });
    await createRow(t.http, owner, doc, { id: 'b', values: { due: day(-20) } });
    const last = await createRow(t.http, owner, doc, { id: 'c', values: {} });
    const expected = [
      { fieldId: 'total', value: { number: 30 } },
      { fieldId: 'mean', value: { number: 15 } },
      { fieldId: 'count', value: { number: 2 } },
    ];

    const read = await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200);
    expect(read.body.payload.properties).toEqual(expected);
    const revisionId = (last as unknown as { request: { revisionId: string } }).request.revisionId;
    const exported = await request(t.http).get(`${doc.path}/revisions/${revisionId}/export`).set(bearer(owner)).expect(200);
    expect(JSON.parse(exported.text).properties).toEqual(expected);
  });
});
