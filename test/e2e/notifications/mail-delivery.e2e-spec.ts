import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { freePort } from '../../../src/database/embedded-postgres.js';
import { TransactionHost } from '../../../src/database/transaction-host.js';
import { NotifierService } from '../../../src/modules/notifications/notifier.service.js';
import { lastMessageTo } from '../../factories/notifications.js';
import { bearer, registerUser } from '../../factories/users.factory.js';
import { SmtpSink } from '../../utils/smtp-sink.js';
import { createTestDatabase } from '../../utils/test-database.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) {
      throw new Error('timed out waiting for the condition');
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Fast retries and polls, so a test sees several attempts within a second or two. */
const FAST_RETRIES = { MAIL_POLL_INTERVAL_MS: '100', MAIL_RETRY_BASE_MS: '250' };

interface DeliveryRow {
  id: string;
  attempts: number;
  sent_at: Date | null;
  next_attempt_at: Date | null;
  failed_at: Date | null;
  last_error: string | null;
}

async function deliveryOf(
  dataSource: DataSource,
  where: { id?: string; recipient?: string },
): Promise<DeliveryRow | undefined> {
  const rows = await dataSource.query<DeliveryRow[]>(
    `SELECT id, attempts, sent_at, next_attempt_at, failed_at, last_error FROM notifications
      WHERE ($1::uuid IS NULL OR id = $1) AND ($2::text IS NULL OR lower(recipient) = lower($2))
      ORDER BY created_at DESC LIMIT 1`,
    [where.id ?? null, where.recipient ?? null],
  );
  return rows[0];
}

/** Records one e-mail the way the services do: through NotifierService inside a unit of work. */
async function sendMail(
  t: TestApp,
  subject: string,
  to = `${randomUUID().slice(0, 8)}@example.test`,
): Promise<string> {
  const tx = t.app.get(TransactionHost);
  const notifier = t.app.get(NotifierService);
  return tx.run(() =>
    notifier.send({ channel: 'email', to, kind: 'probe', subject, body: `body of ${subject}` }),
  );
}

describe('e-mail delivery with retries', () => {
  let sink: SmtpSink;
  let t: TestApp | undefined;

  beforeEach(() => {
    sink = new SmtpSink();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
    await sink.close();
  });

  it('delivers an e-mailed code once after an SMTP outage (connection refused), and the code works', async () => {
    // The port is reserved but nothing listens yet: the server is down.
    const port = await freePort();
    t = await createTestApp({ ...FAST_RETRIES, SMTP_URL: `smtp://127.0.0.1:${port}` });
    const user = await registerUser(t.http);
    await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'email' })
      .expect(200);
    const recorded = await lastMessageTo(t.dataSource, user.email, 'two_factor_enrollment');
    const code = String(recorded?.data.code);
    expect(code).toMatch(/^\d+$/);

    const app = t;
    await waitFor(
      async () => ((await deliveryOf(app.dataSource, { recipient: user.email }))?.attempts ?? 0) >= 2,
    );
    const failing = await deliveryOf(t.dataSource, { recipient: user.email });
    expect(failing).toMatchObject({ sent_at: null, failed_at: null });
    expect(failing?.last_error).toMatch(/ECONNREFUSED/);
    expect(failing?.next_attempt_at).not.toBeNull();

    // The server comes back: the next retry delivers the message.
    await sink.listen(port);
    await waitFor(() => sink.matching(code).length > 0);
    await waitFor(
      async () => (await deliveryOf(app.dataSource, { recipient: user.email }))?.sent_at instanceof Date,
    );
    const sent = await deliveryOf(t.dataSource, { recipient: user.email });
    expect(sent?.attempts).toBeGreaterThan(1);
    expect(sent?.last_error).toMatch(/ECONNREFUSED/);
    expect(sent).toMatchObject({ next_attempt_at: null, failed_at: null });
    const [mail] = sink.matching(code);
    expect(mail.to).toEqual([user.email]);
    expect(mail.from).toBe('no-reply@quire.local');

    // Several polls later it has still arrived exactly once.
    await sleep(600);
    expect(sink.matching(code)).toHaveLength(1);

    // The code that arrived by e-mail confirms the enrolment.
    await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'email', code })
      .expect(200);
  });

  it('retries while the server answers 421 and keeps its reply as the last error', async () => {
    sink.mode = 'unavailable';
    const port = await sink.listen();
    t = await createTestApp({ ...FAST_RETRIES, SMTP_URL: `smtp://127.0.0.1:${port}` });
    const subject = `invitation ${randomUUID()}`;
    const id = await sendMail(t, subject);
    const app = t;
    await waitFor(async () => ((await deliveryOf(app.dataSource, { id }))?.attempts ?? 0) >= 2);
    expect((await deliveryOf(t.dataSource, { id }))?.last_error).toMatch(/421/);
    expect(sink.received).toHaveLength(0);

    sink.mode = 'accept';
    await waitFor(async () => (await deliveryOf(app.dataSource, { id }))?.sent_at instanceof Date);
    await sleep(500);
    expect(sink.matching(subject)).toHaveLength(1);
    const sent = await deliveryOf(t.dataSource, { id });
    expect(sent?.attempts).toBeGreaterThan(1);
    expect(sent?.last_error).toMatch(/421/);
  });

  it('sends nothing for a unit of work that rolls back', async () => {
    const port = await sink.listen();
    t = await createTestApp({ ...FAST_RETRIES, SMTP_URL: `smtp://127.0.0.1:${port}` });
    const tx = t.app.get(TransactionHost);
    const notifier = t.app.get(NotifierService);
    const subject = `rolled back ${randomUUID()}`;
    let id = '';
    await expect(
      tx.run(async () => {
        id = await notifier.send({
          channel: 'email',
          to: 'nobody@example.test',
          kind: 'probe',
          subject,
          body: 'never',
        });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    // A committed message sent afterwards arrives, so the job was running all along.
    const committed = `committed ${randomUUID()}`;
    await sendMail(t, committed);
    await waitFor(() => sink.matching(committed).length === 1);
    await sleep(400);
    expect(id).not.toBe('');
    expect(await deliveryOf(t.dataSource, { id })).toBeUndefined();
    expect(sink.matching(subject)).toHaveLength(0);
  });

  it('only records e-mail when SMTP_URL is unset', async () => {
    t = await createTestApp(FAST_RETRIES);
    const id = await sendMail(t, `unsent ${randomUUID()}`);
    await sleep(300);
    expect(await deliveryOf(t.dataSource, { id })).toMatchObject({
      attempts: 0,
      sent_at: null,
      next_attempt_at: null,
      failed_at: null,
    });
  });

  it('gives up after MAIL_MAX_ATTEMPTS and says so in the record', async () => {
    const port = await freePort();
    t = await createTestApp({
      ...FAST_RETRIES,
      MAIL_RETRY_BASE_MS: '50',
      MAIL_MAX_ATTEMPTS: '3',
      SMTP_URL: `smtp://127.0.0.1:${port}`,
    });
    const id = await sendMail(t, `doomed ${randomUUID()}`);
    const app = t;
    await waitFor(async () => (await deliveryOf(app.dataSource, { id }))?.failed_at instanceof Date);
    expect(await deliveryOf(t.dataSource, { id })).toMatchObject({
      attempts: 3,
      sent_at: null,
      next_attempt_at: null,
    });
    expect((await deliveryOf(t.dataSource, { id }))?.last_error).toMatch(/ECONNREFUSED/);
  });
});

describe('e-mail delivery across restarts and instances', () => {
  let database: { url: string; drop: () => Promise<void> };
  let sink: SmtpSink;
  const apps: TestApp[] = [];

  beforeEach(async () => {
    database = await createTestDatabase();
    sink = new SmtpSink();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await sink.close();
    await database.drop();
  });

  it('delivers after a restart what was queued while the server was down', async () => {
    const port = await freePort();
    const env = { ...FAST_RETRIES, SMTP_URL: `smtp://127.0.0.1:${port}` };
    const before = await createTestApp(env, { databaseUrl: database.url });
    const subject = `queued before the restart ${randomUUID()}`;
    const id = await sendMail(before, subject);
    await waitFor(async () => ((await deliveryOf(before.dataSource, { id }))?.attempts ?? 0) >= 1);
    await before.close();

    await sink.listen(port);
    const after = await createTestApp(env, { databaseUrl: database.url });
    apps.push(after);
    await waitFor(async () => (await deliveryOf(after.dataSource, { id }))?.sent_at instanceof Date);
    expect(sink.matching(subject)).toHaveLength(1);
    expect((await deliveryOf(after.dataSource, { id }))?.attempts).toBeGreaterThan(1);
  });

  it('two instances on one database send each of 30 messages exactly once', async () => {
    const N = 30;
    sink.dataDelayMs = 15;
    const port = await sink.listen();
    const env = { ...FAST_RETRIES, MAIL_POLL_INTERVAL_MS: '50', SMTP_URL: `smtp://127.0.0.1:${port}` };
    // A sender address per instance shows which one delivered a message.
    const [a, b] = await Promise.all([
      createTestApp({ ...env, MAIL_FROM: 'a@quire.test' }, { databaseUrl: database.url }),
      createTestApp({ ...env, MAIL_FROM: 'b@quire.test' }, { databaseUrl: database.url }),
    ]);
    apps.push(a, b);
    const batch = randomUUID();
    const tx = a.app.get(TransactionHost);
    const notifier = a.app.get(NotifierService);
    await tx.run(async () => {
      for (let i = 0; i < N; i += 1) {
        await notifier.send({
          channel: 'email',
          to: `r${i}@example.test`,
          kind: 'probe',
          subject: `${batch} #${i}#`,
          body: 'x',
        });
      }
    });
    await waitFor(() => sink.matching(batch).length >= N, 30_000);
    // Each message is marked sent only after the sink answered: wait until every one is, once (attempts never
    // go down, so a message sent twice or failed once keeps this from ever holding).
    const unsentCount = async (): Promise<number> =>
      (
        await a.dataSource.query<Array<{ n: number }>>(
          `SELECT count(*)::int AS n FROM notifications WHERE subject LIKE $1 AND (sent_at IS NULL OR attempts <> 1)`,
          [`${batch}%`],
        )
      )[0].n;
    await waitFor(async () => (await unsentCount()) === 0);
    await sleep(400);
    const subjects = sink.matching(batch).map((mail) => /#(\d+)#/.exec(mail.data)?.[1]);
    expect(subjects).toHaveLength(N);
    expect(new Set(subjects).size).toBe(N);
    // Both instances took part, so the claim really was contended.
    expect(sink.matching(batch).filter((mail) => mail.from === 'a@quire.test').length).toBeGreaterThan(0);
    expect(sink.matching(batch).filter((mail) => mail.from === 'b@quire.test').length).toBeGreaterThan(0);
    expect(await unsentCount()).toBe(0);
  });
});
