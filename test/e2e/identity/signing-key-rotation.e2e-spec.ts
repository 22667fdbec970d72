import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createTestDatabase } from '../../utils/test-database.js';

/**
 * The signing key is rotated once it is 90 days old (docs/auth.md, "Signing keys and rotation"): checked at start-up
 * as well as hourly, so an instance restarted more often than hourly still rotates.
 */
describe('identity: signing key rotation at start-up', () => {
  let database: { url: string; drop: () => Promise<void> };
  let first: TestApp | undefined;
  let second: TestApp | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await database?.drop();
  });

  const kids = async (t: TestApp): Promise<string[]> =>
    ((await request(t.http).get('/jwks.json').expect(200)).body.keys as Array<{ kid: string }>).map((key) => key.kid);

  it('a start finding a key older than 90 days rotates it; a younger key is kept', async () => {
    first = await createTestApp({}, { databaseUrl: database.url });
    const [original] = await kids(first);
    expect(original).toEqual(expect.any(String));
    await first.close();
    first = undefined;

    // A restart with a young key keeps it.
    second = await createTestApp({}, { databaseUrl: database.url });
    expect(await kids(second)).toEqual([original]);
    await second.dataSource.query(`UPDATE signing_keys SET created_at = now() - interval '91 days' WHERE retired_at IS NULL`);
    await second.close();
    second = undefined;

    first = await createTestApp({}, { databaseUrl: database.url });
    const [active] = await first.dataSource.query<Array<{ kid: string }>>(`SELECT kid FROM signing_keys WHERE retired_at IS NULL`);
    expect(active.kid).not.toBe(original);
    // The retired key stays published for tokens already issued.
    expect(await kids(first)).toEqual(expect.arrayContaining([active.kid, original]));
  });
});
