import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, newUser } from './documents.fixtures.js';

/** Property formulas aggregating rows (docs/formulas.md): a runtime error leaves the value empty, never fails a call. */
describe('property aggregates beyond the double range', () => {
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
});
