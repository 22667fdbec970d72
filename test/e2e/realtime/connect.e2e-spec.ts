import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { REALTIME_TEST_ENV, realtimePath } from './realtime.fixtures.js';

/** GET .../connect: where the socket and the stream are, built from a valid Host or else PUBLIC_BASE_URL. */
describe('realtime connect URLs', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  const connect = (host: string, headers: Record<string, string> = {}): request.Test =>
    request(t.http)
      .get(realtimePath(doc, 'connect'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set('Authorization', `Bearer ${owner.token}`)
      .set('Host', host)
      .set(headers);

  beforeAll(async () => {
    t = await createTestApp({ ...REALTIME_TEST_ENV, PUBLIC_BASE_URL: 'https://quire.example.com/base' });
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner, { docType: 'products', id: 'c-1' });
  });

  afterAll(async () => {
    await t.close();
  });

  it('uses a valid Host (name or address, optional port 1–65535) as it is', async () => {
    const query = `docType=products&docId=c-1&workspaceId=${owner.defaultWorkspaceId}`;
    for (const [host, wsHost, port] of [
      ['example.test:8443', 'example.test', 8443],
      ['Example.TEST', 'example.test', 80],
      ['10.1.2.3:1', '10.1.2.3', 1],
      ['[::1]:65535', '[::1]', 65535],
      ['my_service:3000', 'my_service', 3000],
    ] as const) {
      const res = await connect(host);
      expect([host, res.status]).toEqual([host, 200]);
      const authority = port === 80 ? wsHost : `${wsHost}:${port}`;
      expect(res.body.payload).toMatchObject({
        wsUrl: `ws://${authority}/realtime/ws?${query}`,
        wsHost,
        wsPath: '/realtime/ws',
        port,
        sseUrl: `http://${authority}${realtimePath(doc, 'events/stream')}?token=${res.body.payload.token}`,
      });
    }
  });

  it('falls back to PUBLIC_BASE_URL for a Host that is not one, and never fails', async () => {
    const query = `docType=products&docId=c-1&workspaceId=${owner.defaultWorkspaceId}`;
    for (const host of [
      'x:99999',
      'x:0',
      'bad host',
      'a:b:c',
      'ex.com:abc',
      '%zz',
      'a/b',
      'a@b',
      'a?b',
      '999.1.1.1',
      '-a.com',
      'a..b',
      '[zz]',
    ]) {
      const res = await connect(host);
      expect([host, res.status]).toEqual([host, 200]);
      expect(res.body.payload).toMatchObject({
        wsUrl: `wss://quire.example.com/base/realtime/ws?${query}`,
        wsHost: 'quire.example.com',
        wsPath: '/base/realtime/ws',
        port: 443,
        sseUrl: `https://quire.example.com/base${realtimePath(doc, 'events/stream')}?token=${res.body.payload.token}`,
        token: expect.any(String),
      });
    }
  });

  it('honours the forwarded host and scheme from a trusted proxy, checked like Host', async () => {
    const forwarded = await connect('internal:3000', {
      'X-Forwarded-Host': 'public.example.org',
      'X-Forwarded-Proto': 'https',
    });
    expect(forwarded.status).toBe(200);
    expect(forwarded.body.payload).toMatchObject({
      wsUrl: expect.stringMatching(/^wss:\/\/public\.example\.org\/realtime\/ws\?/),
      wsHost: 'public.example.org',
      port: 443,
    });
    const bad = await connect('internal:3000', { 'X-Forwarded-Host': 'evil.example/path' });
    expect(bad.status).toBe(200);
    expect(bad.body.payload.wsUrl).toMatch(/^wss:\/\/quire\.example\.com\/base\/realtime\/ws\?/);
  });
});
