import { connect } from 'node:net';
import request from 'supertest';
import { TransactionHost } from '../../../src/database/transaction-host.js';
import { OutboxService } from '../../../src/modules/events/outbox.service.js';
import { RealtimeHub } from '../../../src/modules/realtime/services/realtime-hub.service.js';
import { DOMAIN_EVENT_TYPES } from '../../../src/modules/events/event-catalogue.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  addWorkspace,
  bearer,
  createDocument,
  createRow,
  type DocHandle,
} from '../documents/documents.fixtures.js';
import {
  connectInfo,
  coordinates,
  listen,
  openStream,
  REALTIME_TEST_ENV,
  realtimePath,
  recordEvents,
  sleep,
  TestSocket,
  waitFor,
} from './realtime.fixtures.js';

describe('realtime event stream (spec 6.3)', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp({ ...REALTIME_TEST_ENV, REALTIME_MAX_BUFFERED_BYTES: '262144' });
    base = await listen(t);
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner, { docType: 'products', id: 'shared-id' });
  });

  afterAll(async () => {
    await t.close();
  });

  it('carries every event kind after commit, in order, and nothing of the same id in another tenant', async () => {
    const stranger = await registerUser(t.http);
    const strangersDoc = await createDocument(t.http, stranger, { docType: 'products', id: 'shared-id' });
    const info = await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId);
    expect(info.sseUrl).toContain(`${realtimePath(doc, 'events/stream')}?token=`);
    const stream = openStream(info.sseUrl.replace(/^http:\/\/[^/]+/, base));
    await waitFor(() => stream.opened() === 1, 15_000, 'open');

    await recordEvents(t, coordinates(stranger, strangersDoc), ['request_created']);
    await recordEvents(t, coordinates(owner, doc), DOMAIN_EVENT_TYPES);
    const row = await createRow(t.http, owner, doc, { values: { name: 'Bolt', price: 2 } });

    // The real merge's events (the recorded ones carry a `marker`).
    const real = (type: string) =>
      stream.events.find((event) => event.type === type && !('marker' in (event.data.payload as object)));
    await waitFor(
      () => real('request_merged') !== undefined && real('data_row_created') !== undefined,
      15_000,
      'merge events',
    );
    stream.es.close();
    const kinds = stream.events.map((event) => event.type);
    expect(kinds.slice(0, DOMAIN_EVENT_TYPES.length)).toEqual([...DOMAIN_EVENT_TYPES]);
    expect(kinds).toEqual(expect.arrayContaining(['request_created', 'data_row_created', 'request_merged']));
    const ids = stream.events.map((event) => BigInt(event.id));
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
    expect(new Set(ids.map(String)).size).toBe(ids.length);
    const first = stream.events[0].data;
    expect(first).toMatchObject({
      id: stream.events[0].id,
      event: DOMAIN_EVENT_TYPES[0],
      docType: 'products',
      docId: 'shared-id',
      organizationId: owner.defaultOrganizationId,
      workspaceId: owner.defaultWorkspaceId,
      payload: { n: 0 },
    });
    const created = real('data_row_created');
    expect(JSON.stringify(created?.data.payload)).toContain(row.id);
    expect(stream.events.every((event) => event.data.organizationId === owner.defaultOrganizationId)).toBe(
      true,
    );

    // The history carries the same events, newest first.
    const history = await request(t.http)
      .get(realtimePath(doc, 'events'))
      .query({ workspaceId: owner.defaultWorkspaceId, pageSize: 100 })
      .set(bearer(owner));
    expect(history.status).toBe(200);
    // Newest first; older entries are the document's events from before the stream opened (its creation).
    const historyIds = history.body.payload.items.map((event: { id: string }) => event.id);
    expect(historyIds.slice(0, stream.events.length)).toEqual(
      [...stream.events.map((event) => event.id)].reverse(),
    );
    expect(
      historyIds.slice(stream.events.length).every((id: string) => BigInt(id) < BigInt(stream.events[0].id)),
    ).toBe(true);
    const strangers = await request(t.http)
      .get(realtimePath(strangersDoc, 'events'))
      .query({ workspaceId: stranger.defaultWorkspaceId })
      .set(bearer(stranger));
    // The stranger's document (same type and id, other tenant) has only its own events: its creation, and ours.
    const markers = strangers.body.payload.items.map(
      (event: { payload: { marker?: string } }) => event.payload.marker,
    );
    expect(markers.filter(Boolean)).toEqual(['request_created']);
  });

  it('sends the retry hint, heartbeat comments and the event-stream headers', async () => {
    const controller = new AbortController();
    const res = await fetch(
      `${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`,
      { headers: bearer(owner), signal: controller.signal },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('cache-control')).toContain('no-cache');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    const until = Date.now() + 3000;
    while (!text.includes(': heartbeat') && Date.now() < until) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    expect(text).toMatch(/^retry: 200\n/);
    expect(text).toContain(': heartbeat');
  });

  it('takes the connect token as a bearer token on the spec path, as the socket auth does', async () => {
    // A reader of spec 4.5 holds `token` from /connect and the stream path of 6.3: Authorization: Bearer <token>.
    const info = await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId);
    const stream = openStream(`${base}${realtimePath(doc, 'events/stream')}`, info.token);
    try {
      await waitFor(() => stream.opened() > 0 || stream.errors.length > 0, 15_000, 'open');
      expect(stream.errors).toEqual([]);
      const row = await createRow(t.http, owner, doc, { values: [{ fieldId: 'name', value: { text: 'bearer' } }] });
      await waitFor(
        () => stream.events.some((e) => e.type === 'data_row_created' && (e.data.payload as { rowId?: string }).rowId === row.id),
        15_000,
        'data_row_created',
      );
    } finally {
      stream.es.close();
    }
  });

  it('resumes after a drop with Last-Event-ID (header and query) without loss or duplicates', async () => {
    const coords = coordinates(owner, doc);
    const url = `${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`;
    const stream = openStream(url, owner.token);
    await waitFor(() => stream.opened() === 1);
    await recordEvents(t, coords, ['comment_created', 'comment_updated', 'comment_deleted']);
    await waitFor(() => stream.events.length === 3, 15_000, 'three events');
    const thirdId = stream.events[2].id;

    // The server drops every stream of the document; the client reconnects on its own with Last-Event-ID.
    const dropped = await request(t.http)
      .post(realtimePath(doc, 'disconnect-all'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner));
    expect(dropped.status).toBe(200);
    await waitFor(() => stream.events.some((event) => event.type === 'stream_end'), 15_000, 'stream_end');
    await recordEvents(t, coords, ['view_created', 'view_updated', 'view_deleted']);
    await waitFor(() => stream.opened() === 2, 15_000, 'reconnect');
    await waitFor(
      () => stream.events.filter((event) => event.type !== 'stream_end').length >= 6,
      15_000,
      'six events',
    );
    await sleep(300);
    stream.es.close();
    const domain = stream.events.filter((event) => event.type !== 'stream_end');
    expect(domain.map((event) => event.type)).toEqual([
      'comment_created',
      'comment_updated',
      'comment_deleted',
      'view_created',
      'view_updated',
      'view_deleted',
    ]);
    expect(stream.events.find((event) => event.type === 'stream_end')?.data).toEqual({
      reason: 'DISCONNECTED_BY_MANAGER',
      code: 4410,
    });

    // The query form, for clients that choose where to start.
    const resumed = openStream(`${url}&lastEventId=${thirdId}`, owner.token);
    await waitFor(() => resumed.events.length >= 3, 15_000, 'catch-up');
    await sleep(200);
    resumed.es.close();
    expect(resumed.events.map((event) => event.type)).toEqual([
      'view_created',
      'view_updated',
      'view_deleted',
    ]);
  });

  it('says so once when the events after Last-Event-ID left the retention window', async () => {
    const other = await createDocument(t.http, owner, { docType: 'notes', id: 'retention' });
    await recordEvents(t, coordinates(owner, other), ['comment_created', 'comment_updated']);
    const rows = await t.dataSource.query<Array<{ seq: string }>>(
      `SELECT seq::text AS seq FROM outbox WHERE doc_type = 'notes' AND doc_id = 'retention' ORDER BY seq`,
    );
    await t.dataSource.query(
      `UPDATE outbox SET occurred_at = now() - interval '2 days' WHERE doc_type = 'notes' AND doc_id = 'retention'`,
    );
    // The document is as old as its events: a document's history starts at its creation (a re-created id's does).
    await t.dataSource.query(
      `UPDATE documents SET created_at = now() - interval '3 days' WHERE doc_type = 'notes' AND doc_id = 'retention'`,
    );
    await recordEvents(t, coordinates(owner, other), ['comment_resolved']);
    const stream = openStream(
      `${base}${realtimePath(other, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}&lastEventId=${Number(rows[0].seq) - 1}`,
      owner.token,
    );
    await waitFor(() => stream.events.length >= 2, 15_000, 'resync + event');
    stream.es.close();
    expect(stream.events[0]).toMatchObject({
      type: 'resync_required',
      data: { reason: 'RETENTION_EXCEEDED', retentionSeconds: 86400 },
    });
    expect(stream.events.slice(1).map((event) => event.type)).toEqual(['comment_resolved']);
  });

  it('drops a client that does not read instead of buffering without end', async () => {
    const slow = await createDocument(t.http, owner, { docType: 'products', id: 'slow' });
    const [{ id: uuid }] = await t.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM documents WHERE workspace_id = $1 AND doc_type = 'products' AND doc_id = 'slow'`,
      [owner.defaultWorkspaceId],
    );
    const hub = t.app.get(RealtimeHub);
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(
      `GET ${realtimePath(slow, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.token}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    await waitFor(() => hub.clientsOf(uuid).length === 1, 15_000, 'stream registered');
    socket.pause();
    const big = 'x'.repeat(256 * 1024);
    const tx = t.app.get(TransactionHost);
    const outbox = t.app.get(OutboxService);
    const coords = coordinates(owner, slow);
    for (let batch = 0; batch < 8 && hub.clientsOf(uuid).length > 0; batch += 1) {
      await tx.run(() =>
        outbox.record(
          ...Array.from({ length: 10 }, () => ({
            event: 'comment_created',
            ...coords,
            triggeredBy: 'test',
            payload: { big },
          })),
        ),
      );
      await sleep(300);
    }
    await waitFor(() => hub.clientsOf(uuid).length === 0, 15000, 'slow consumer dropped');
    socket.destroy();
  });

  it('refuses without a credential, with a foreign or forged token, and to strangers', async () => {
    const path = realtimePath(doc, 'events/stream');
    const none = await request(t.http).get(path).query({ workspaceId: owner.defaultWorkspaceId });
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('UNAUTHORIZED');

    const forged = await request(t.http).get(path).query({ token: 'eyJhbGciOiJub25lIn0.e30.' });
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('INVALID_TOKEN');

    // A connect token of another document, and a connect token used as an API token.
    const otherDoc = await createDocument(t.http, owner, { docType: 'products', id: 'second' });
    const otherInfo = await connectInfo(t.http, owner, otherDoc, owner.defaultWorkspaceId);
    const foreign = await request(t.http).get(path).query({ token: otherInfo.token });
    expect(foreign.status).toBe(401);
    expect(foreign.body.code).toBe('INVALID_TOKEN');
    const asApiToken = await request(t.http)
      .get(`/api/v1/doc/products/second`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set('Authorization', `Bearer ${otherInfo.token}`);
    expect(asApiToken.status).toBe(401);
    const asStreamBearer = await request(t.http)
      .get(path)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set('Authorization', `Bearer ${otherInfo.token}`);
    expect(asStreamBearer.status).toBe(401);

    // Another organization's user: 404 as for a document that does not exist, with nothing streamed.
    const stranger = await registerUser(t.http);
    const strangerRes = await request(t.http)
      .get(path)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(stranger));
    expect(strangerRes.status).toBe(404);
    expect(strangerRes.body.code).toBe('DOC_NOT_FOUND');
    const strangerConnect = await request(t.http)
      .get(realtimePath(doc, 'connect'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(stranger));
    expect(strangerConnect.status).toBe(404);

    // The unchanged EventSource client sees the refusal and stops.
    const stream = openStream(`${base}${path}?token=garbage`);
    await waitFor(() => stream.errors.length > 0, 15_000, 'error');
    expect(stream.errors[0].code).toBe(401);
    await sleep(400);
    expect(stream.es.readyState).toBe(stream.es.CLOSED);
    expect(stream.opened()).toBe(0);

    const badResume = await request(t.http)
      .get(path)
      .query({ workspaceId: owner.defaultWorkspaceId, lastEventId: 'abc' })
      .set(bearer(owner));
    expect(badResume.status).toBe(400);
    expect(badResume.body.code).toBe('VALIDATION_ERROR');
  });

  it('a connect token opens only its own document, not the same id in the context the URL names', async () => {
    const workspaceId = await addWorkspace(t.dataSource, owner);
    await createDocument(t.http, owner, { docType: 'products', id: 'shared-id', workspaceId });
    const { token } = await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId);
    const path = realtimePath(doc, 'events/stream');
    for (const [query, header] of [
      [{ workspaceId, token }, undefined],
      [{ token }, workspaceId],
      [{ organizationId: owner.defaultOrganizationId, token }, undefined],
    ] as const) {
      // A bounded wait: an accepted stream would never end.
      const call = request(t.http).get(path).query(query).timeout({ deadline: 5_000 });
      const res = header ? await call.set('X-Workspace-Id', header) : await call;
      expect([res.status, res.body.code]).toEqual([401, 'INVALID_TOKEN']);
    }
    // Its own context, or none (the sseUrl of /connect names none): served.
    await request(t.http).head(path).query({ workspaceId: owner.defaultWorkspaceId, token }).expect(200);
    await request(t.http).head(path).query({ token }).expect(200);

    const socket = await TestSocket.open(
      `${base.replace('http', 'ws')}/realtime/ws?docType=products&docId=shared-id&workspaceId=${workspaceId}`,
    );
    expect((await socket.send('auth', { token })).payload).toMatchObject({ code: 'INVALID_TOKEN' });
    expect(await socket.closed()).toBe(4401);
  });

  it('ends the stream when access is lost: member removed, API key revoked, session ended', async () => {
    const viewer = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    const info = await connectInfo(t.http, viewer, doc, owner.defaultWorkspaceId);
    const byToken = openStream(info.sseUrl.replace(/^http:\/\/[^/]+/, base));

    const keyRes = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(owner))
      .send({ name: 'stream', scopes: ['doc:read'] });
    expect(keyRes.status).toBe(201);
    const url = `${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`;
    const byKey = openStream(url, keyRes.body.payload.key);

    const session = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, session, 'editor');
    const bySession = openStream(url, session.token);
    await waitFor(
      () => byToken.opened() === 1 && byKey.opened() === 1 && bySession.opened() === 1,
      15_000,
      'three streams',
    );

    await t.dataSource.query(`DELETE FROM workspace_members WHERE user_id = $1`, [viewer.id]);
    await waitFor(
      () => byToken.events.some((event) => event.type === 'stream_end'),
      15_000,
      'end after removal',
    );
    expect(byToken.events.find((event) => event.type === 'stream_end')?.data).toEqual({
      reason: 'ACCESS_LOST',
      code: 4403,
    });
    await waitFor(() => byToken.es.readyState === byToken.es.CLOSED, 15_000, 'client gives up');
    expect(byKey.events).toEqual([]);

    const revoked = await request(t.http)
      .post(`/api/v1/api-keys/${keyRes.body.payload.id}/revoke`)
      .set(bearer(owner));
    expect(revoked.status).toBe(200);
    await waitFor(() => byKey.events.some((event) => event.type === 'stream_end'), 15_000, 'end after revoke');
    await waitFor(() => byKey.es.readyState === byKey.es.CLOSED, 15_000, 'key client gives up');

    const logout = await request(t.http)
      .delete(`/api/v1/auth/sessions/${session.sessionId}`)
      .set(bearer(session));
    expect([200, 204]).toContain(logout.status);
    await waitFor(
      () => bySession.events.some((event) => event.type === 'stream_end'),
      15_000,
      'end after logout',
    );
    [byToken, byKey, bySession].forEach((stream) => stream.es.close());

    // Nothing after the loss reaches them.
    await recordEvents(t, coordinates(owner, doc), ['comment_created']);
    await sleep(300);
    expect(byToken.events.filter((event) => event.type === 'comment_created')).toEqual([]);
  });
});
