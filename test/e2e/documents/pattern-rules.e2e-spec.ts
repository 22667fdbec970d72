import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser } from './documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'code', name: 'Code', type: 'text', validations: [{ ruleType: 'pattern', config: { pattern: '^(a+)+$' }, message: { en: 'Only a' } }] },
];

/** Values that take Node's backtracking engine seconds (28 characters) to forever (5,000) against `^(a+)+$`. */
const EVIL_VALUES = [`${'a'.repeat(28)}!`, `${'a'.repeat(5000)}!`];

describe('documents: pattern rules run in linear time (RE2)', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, { fields: FIELDS });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a value that would backtrack with VALIDATION_ERROR at once, while the service keeps answering', async () => {
    const started = Date.now();
    const writes = EVIL_VALUES.flatMap((code, index) => [
      request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: `evil-${index}`, values: { name: 'E', code } }),
      request(t.http)
        .post(`${doc.path}/requests`)
        .set(bearer(owner))
        .send({ title: 'Evil', changes: [{ type: 'row-create', target: { kind: 'row', rowId: `evil-r${index}` }, newValue: { values: { code } } }] }),
    ]);
    const health = Array.from({ length: 5 }, () => request(t.http).get('/health'));
    const [written, checks] = await Promise.all([Promise.all(writes), Promise.all(health)]);
    const elapsed = Date.now() - started;

    for (const res of written) {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(res.body)).toEqual([expect.objectContaining({ fieldId: 'code', reason: 'value does not match pattern ^(a+)+$', message: { en: 'Only a' } })]);
    }
    expect(checks.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    // Not a benchmark: a backtracking engine would need far longer than this for the 28-character value alone.
    expect(elapsed).toBeLessThan(2000);

    // A matching value of the same length is accepted.
    await createRow(t.http, owner, doc, { id: 'good', values: { name: 'G', code: 'a'.repeat(5000) } });
    const update = await request(t.http).put(`${doc.path}/data/good`).set(bearer(owner)).send({ values: { code: EVIL_VALUES[1] } });
    expect(update.status).toBe(400);
    expect(update.body.details).toMatchObject({ fieldId: 'code' });
  });

  it('refuses rules RE2 cannot evaluate when the metadata is written, naming the field', async () => {
    for (const pattern of ['^(a)\\1$', '^(?<x>a)\\k<x>$', 'a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b']) {
      const fields = [...FIELDS, { id: 'ref', name: 'Ref', type: 'text', validations: [{ ruleType: 'pattern', config: { pattern } }] }];
      const res = await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields });
      expect({ pattern, status: res.status, code: res.body.code }).toEqual({ pattern, status: 400, code: 'VALIDATION_ERROR' });
      expect(problemsOf(res.body)).toEqual([
        {
          fieldId: 'ref',
          field: 'fields[2].validations[0].config.pattern',
          reason: expect.stringContaining('no backreferences, lookahead or lookbehind'),
        },
      ]);
    }
    const current = await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200);
    expect(current.body.payload.fields.map((field: { id: string }) => field.id)).toEqual(['name', 'code']);

    // Patterns RE2 supports still go through, flags included.
    const fields = [...FIELDS, { id: 'sku', name: 'SKU', type: 'text', validations: [{ ruleType: 'pattern', config: { pattern: '^[a-z]{3}-\\d+$', flags: 'i' } }] }];
    await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields }).expect(200);
    await createRow(t.http, owner, doc, { id: 'sku-ok', values: { sku: 'ABC-12' } });
    const bad = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'sku-bad', values: { sku: 'ABC-' } }).expect(400);
    expect(bad.body.details).toMatchObject({ fieldId: 'sku', reason: 'value does not match pattern ^[a-z]{3}-\\d+$' });
  });

  it('refuses values for a rule stored before RE2 rather than evaluating it by backtracking', async () => {
    // A rule written when the service still accepted any JavaScript pattern.
    const legacy = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }] });
    await t.dataSource.query(
      `UPDATE documents SET metadata = jsonb_set(metadata, '{fields,0,validations}', $3::jsonb) WHERE doc_type = $1 AND doc_id = $2`,
      [legacy.docType, legacy.docId, JSON.stringify([{ ruleType: 'pattern', config: { pattern: '^(a+)\\1$' } }])],
    );
    const res = await request(t.http).post(`${legacy.path}/data`).set(bearer(owner)).send({ values: { name: 'aa' } }).expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details).toMatchObject({ fieldId: 'name', reason: expect.stringMatching(/^value cannot be checked against pattern/) });
  });
});
