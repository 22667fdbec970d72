import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument } from './documents.fixtures.js';

/**
 * Deletes of one document at once (docs/documents.md): the first deletes it, every other answers as a delete after it
 * would — 404 DOC_NOT_FOUND — instead of a 200 for a deletion it did not make.
 */
describe('documents: concurrent deletes', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await registerUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  it('of five deletes of one document at once, one answers 200 and the others 404 DOC_NOT_FOUND', async () => {
    for (let round = 0; round < 3; round += 1) {
      const doc = await createDocument(t.http, owner);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => request(t.http).delete(doc.path).set(bearer(owner))),
      );
      const outcomes = answers.map((res) => (res.status === 200 ? 200 : `${res.status} ${res.body.code}`)).sort();
      expect(outcomes).toEqual([200, '404 DOC_NOT_FOUND', '404 DOC_NOT_FOUND', '404 DOC_NOT_FOUND', '404 DOC_NOT_FOUND']);
      await request(t.http).get(doc.path).set(bearer(owner)).expect(404);
    }
  });
});
