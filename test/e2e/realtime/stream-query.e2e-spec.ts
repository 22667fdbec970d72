import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';
import {
  coordinates,
  listen,
  openStream,
  REALTIME_TEST_ENV,
  realtimePath,
  recordEvents,
  waitFor,
} from './realtime.fixtures.js';

/** The event stream's query and Last-Event-ID: checked like every other route's input, never silently ignored. */
describe('realtime event stream parameters', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let doc: DocHandle;

  const stream = (query: Record<string, unknown>, headers: Record<string, string> = {}): request.Test =>
    request(t.http)
      .get(realtimePath(doc, 'events/stream'))
      .query({ workspaceId: owner.defaultWorkspaceId, ...query })
      .set(bearer(owner))
      .set(headers)
      // An accepted stream never ends: give up instead of hanging.
      .timeout(3000);
  const newestId = async (): Promise<bigint> => {
    const [row] = await t.dataSource.query<Array<{ seq: string }>>(
      `SELECT max(seq)::text AS seq FROM outbox WHERE doc_type = 'products' AND doc_id = 'sq-1'`,
    );
    return BigInt(row.seq);
  };

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    base = await listen(t);
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner, { docType: 'products', id: 'sq-1' });
  });

  afterAll(async () => {
    await t.close();
  });

  it('refuses unknown, repeated and malformed parameters naming them', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, string>, string]> = [
      [{ foo: '1' }, {}, 'foo'],
      [{ lastEventId: ['33', '34'] }, {}, 'lastEventId'],
      [{ lastEventId: 'abc' }, {}, 'lastEventId'],
      [{ lastEventId: '-1' }, {}, 'lastEventId'],
      [{ lastEventId: '9999999999999999999' }, {}, 'lastEventId'],
      [{}, { 'Last-Event-ID': 'abc' }, 'Last-Event-ID'],
      [{}, { 'Last-Event-ID': '9223372036854775808' }, 'Last-Event-ID'],
      [{ token: ['a', 'b'] }, {}, 'token'],
    ];
    for (const [query, headers, field] of cases) {
      const res = await stream(query, headers);
      expect([
        query,
        headers,
        res.status,
        res.body.code,
        problemsOf(res.body).map((problem) => problem.field),
      ]).toEqual([query, headers, 400, 'VALIDATION_ERROR', [field]]);
    }
  });

  it('reads an id beyond the newest event as the newest: later events still arrive', async () => {
    await recordEvents(t, coordinates(owner, doc), ['comment_created']);
    const beyond = (await newestId()) + 1_000_000n;
    const url = `${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`;
    const byQuery = openStream(`${url}&lastEventId=${beyond}`, owner.token);
    const byHeader = openStream(url, owner.token);
    // The header form: EventSource sends it on reconnect; here a client that keeps its own position.
    const viaHeader = await fetch(url, {
      headers: { ...bearer(owner), 'Last-Event-ID': beyond.toString() },
      signal: AbortSignal.timeout(5000),
    });
    expect(viaHeader.status).toBe(200);
    const reader = (viaHeader.body as ReadableStream<Uint8Array>).getReader();
    await waitFor(() => byQuery.opened() === 1 && byHeader.opened() === 1, 15_000, 'open');
    await recordEvents(t, coordinates(owner, doc), ['comment_updated']);
    await waitFor(() => byQuery.events.length === 1 && byHeader.events.length === 1, 15_000, 'the next event');
    let text = '';
    while (!text.includes('event: comment_updated')) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    byQuery.es.close();
    byHeader.es.close();
    expect(byQuery.events.map((event) => event.type)).toEqual(['comment_updated']);
    expect(byQuery.events[0].id).toBe(byHeader.events[0].id);
    expect(text).not.toContain('event: comment_created');
  });
});
