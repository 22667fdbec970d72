import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { REALTIME_TEST_ENV, realtimePath } from './realtime.fixtures.js';

/**
 * Releases of one lock at once (docs/realtime.md, "Locks"): one releases it (and announces the release once); the others
 * answer 404 NOT_FOUND, as a release after it does, not 200 for a lock they did not release.
 */
describe('realtime: concurrent unlocks', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner, { docType: 'orders', id: 'o-unlock' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('of five releases of one lock at once, one answers 200 and the others 404 NOT_FOUND', async () => {
    for (let round = 0; round < 3; round += 1) {
      const lock = await request(t.http)
        .post(realtimePath(doc, 'lock'))
        .set(bearer(owner))
        .send({ target: { type: 'row', rowId: `r${round}` } })
        .expect(201);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => request(t.http).delete(realtimePath(doc, `unlock/${lock.body.payload.lockId}`)).set(bearer(owner))),
      );
      const outcomes = answers.map((res) => (res.status === 200 ? 200 : `${res.status} ${res.body.code}`)).sort();
      expect(outcomes).toEqual([200, '404 NOT_FOUND', '404 NOT_FOUND', '404 NOT_FOUND', '404 NOT_FOUND']);
      const locks = await request(t.http).get(realtimePath(doc, 'locks')).set(bearer(owner)).expect(200);
      expect(locks.body.payload.items).toEqual([]);
    }
  });
});
