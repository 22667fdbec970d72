import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * Registration is one unit of work (spec 4.7: register creates the account, its personal organization and default
 * workspace; the answer carries the first session's tokens): a database failure at its last step, the session,
 * leaves nothing behind, so the answer's error is the truth and registering again succeeds.
 */
describe('identity: registration is all or nothing', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    await t.dataSource.query(`
      CREATE FUNCTION test_fail_session() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM users WHERE id = NEW.user_id AND email LIKE 'doomed-%') THEN
          RAISE EXCEPTION 'session insert failed by the test';
        END IF;
        RETURN NEW;
      END $$`);
    await t.dataSource.query(`CREATE TRIGGER test_fail_session BEFORE INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION test_fail_session()`);
  });
  afterAll(async () => {
    await t.close();
  });

  it('a failure creating the first session leaves no account, organization or workspace; the e-mail stays free', async () => {
    const email = `doomed-${Date.now()}@example.test`;
    const body = { email, password: 'correct horse battery staple', displayName: 'Doomed' };

    const failed = await request(t.http).post('/api/v1/auth/register').send(body).expect(500);
    expect(failed.body).toMatchObject({ success: false, code: 'INTERNAL_ERROR', payload: null });
    expect(await t.dataSource.query(`SELECT id FROM users WHERE email = $1`, [email])).toEqual([]);
    expect(await t.dataSource.query(`SELECT id FROM organizations WHERE slug LIKE 'doomed-%'`)).toEqual([]);
    const [orphans] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM workspaces w WHERE NOT EXISTS (SELECT 1 FROM organization_members m WHERE m.organization_id = w.organization_id)`,
    );
    expect(orphans?.n).toBe(0);

    await t.dataSource.query(`DROP TRIGGER test_fail_session ON sessions`);
    const registered = await request(t.http).post('/api/v1/auth/register').send(body).expect(201);
    expect(registered.body.payload).toMatchObject({ accessToken: expect.any(String), user: { email } });
  });
});
