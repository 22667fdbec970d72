import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, registerUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';

/** The app's base URL on loopback, for requests supertest would decorate (it always sets a Content-Type). */
async function listening(t: TestApp): Promise<string> {
  const server = t.http as unknown as import('node:http').Server;
  if (!server.listening) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }
  const address = server.address() as import('node:net').AddressInfo;
  return `http://127.0.0.1:${address.port}`;
}

describe('envelope and errors', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ BODY_LIMIT_BYTES: '2048' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('wraps a success in {success, message, payload}', async () => {
    const res = await request(t.http).get('/health').expect(200);
    expect(res.body).toEqual({
      success: true,
      message: expect.objectContaining({ en: 'OK', zh: '成功', ar: expect.any(String) }),
      payload: { status: 'ok' },
    });
  });

  it('answers an unknown route with 404 NOT_FOUND in the envelope', async () => {
    const res = await request(t.http).get('/api/v1/no-such-thing').expect(404);
    expect(res.body).toMatchObject({ success: false, code: 'NOT_FOUND', payload: null });
    expect(Object.keys(res.body.message)).toEqual(
      expect.arrayContaining(['en', 'zh', 'ja', 'ko', 'es', 'fr', 'de', 'pt', 'ru', 'ar']),
    );
  });

  it('answers a wrong method with 405 METHOD_NOT_ALLOWED and an Allow header', async () => {
    const res = await request(t.http).put('/api/v1/auth/register').expect(405);
    expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('POST');
  });

  it('answers malformed JSON with VALIDATION_ERROR, never 500', async () => {
    const res = await request(t.http)
      .post('/api/v1/auth/register')
      .set('Content-Type', 'application/json')
      .send('{bad')
      .expect(400);
    expect(res.body).toMatchObject({
      success: false,
      code: 'VALIDATION_ERROR',
      details: { field: 'body', reason: 'malformed JSON' },
    });
  });

  it('answers a body nesting deeper than 128 levels with VALIDATION_ERROR (a deep one overflowed the validator: 500)', async () => {
    const nest = (levels: number): unknown => {
      let value: unknown = 'x';
      for (let i = 0; i < levels; i += 1) {
        value = i % 2 === 0 ? { a: value } : [value];
      }
      return value;
    };
    // Also written as text, as a client that overflows nothing would send it (this app's body limit is 2 KB).
    const deep = (pairs: number): string => `{"email":"deep@example.test","password":"x","displayName":${'{"a":['.repeat(pairs)}"x"${']}'.repeat(pairs)}}`;
    for (const body of [JSON.stringify({ email: 'deep@example.test', password: 'x', displayName: nest(129) }), deep(200)]) {
      const res = await request(t.http).post('/api/v1/auth/register').set('Content-Type', 'application/json').send(body).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'body', reason: expect.stringContaining('deeper than 128 levels') } });
    }
    // Within the limit the body reaches validation, which names the field.
    const shallow = await request(t.http).post('/api/v1/auth/register').send({ email: 'deep@example.test', password: 'x', displayName: nest(100) }).expect(400);
    expect(problemsOf(shallow.body).map((d: { field: string }) => d.field)).toContain('displayName');
  });

  it('answers a JSON null or string body by what it is, not as malformed JSON', async () => {
    for (const text of ['null', '"x"', '5']) {
      const res = await request(t.http).post('/api/v1/auth/register').set('Content-Type', 'application/json').send(text).expect(400);
      expect(res.body.details).toEqual({ field: 'body', reason: 'the body must be a JSON object or array' });
    }
  });

  it('refuses a write body that is not JSON with 415 UNSUPPORTED_MEDIA_TYPE (it was read as an empty body)', async () => {
    const user = await registerUser(t.http);
    for (const type of ['application/xml', 'application/octet-stream', 'multipart/form-data; boundary=x']) {
      const res = await request(t.http).patch('/api/v1/users/me').set(bearer(user)).set('Content-Type', type).send('{"displayName":"Typed"}').expect(415);
      expect(res.body).toMatchObject({ success: false, code: 'UNSUPPORTED_MEDIA_TYPE', details: { field: 'Content-Type' } });
    }
    const latin1 = await request(t.http).patch('/api/v1/users/me').set(bearer(user)).set('Content-Type', 'application/json; charset=latin1').send('{"displayName":"x"}').expect(415);
    expect(latin1.body.details).toMatchObject({ field: 'Content-Type' });
    // Nothing changed; JSON and an empty body still work.
    expect((await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(200)).body.payload.displayName).toBe(user.displayName);
    await request(t.http).patch('/api/v1/users/me').set(bearer(user)).send({ displayName: 'Typed' }).expect(200);
    // JSON under a structured-syntax type is JSON.
    await request(t.http).patch('/api/v1/users/me').set(bearer(user)).set('Content-Type', 'application/merge-patch+json').send('{"displayName":"Merged"}').expect(200);
    expect((await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(200)).body.payload.displayName).toBe('Merged');
    // A client that forgot the header (text/plain, as fetch sends a string, or none) is read as JSON, as GitHub's API does.
    await request(t.http).patch('/api/v1/users/me').set(bearer(user)).set('Content-Type', 'text/plain').send('{"displayName":"Plain"}').expect(200);
    const untyped = await fetch(`${await listening(t)}/api/v1/users/me`, { method: 'PATCH', headers: { Authorization: `Bearer ${user.token}` }, body: Buffer.from('{"displayName":"Untyped"}') });
    expect(untyped.status).toBe(200);
    expect((await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(200)).body.payload.displayName).toBe('Untyped');
    // curl -d '{…}' sends JSON as a form; the API's bodies are JSON, so a form body that is not JSON is malformed.
    await request(t.http).patch('/api/v1/users/me').set(bearer(user)).set('Content-Type', 'application/x-www-form-urlencoded').send('{"displayName":"Curl"}').expect(200);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const notJson = await request(t.http).patch('/api/v1/users/me').set(bearer(user)).set('Content-Type', type).send('displayName=x').expect(400);
      expect(notJson.body.details).toMatchObject({ field: 'body', reason: 'malformed JSON' });
    }
  });

  it('answers paths outside the API with the 404 envelope, not an HTML page', async () => {
    // Also below the host-root routes that serve one path only (`/health/x` used to get Express's HTML page).
    for (const path of ['/users/me', '/api/v2/users/me', '/api', '/', '/health/x', '/health/ready/x', '/metrics/x', '/token/x', '/jwks.json/x', '/api/docs-json/x']) {
      const res = await request(t.http).get(path).expect(404);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
    }
    await request(t.http).get('/health').expect(200);
    await request(t.http).get('/health/').expect(200);
    await request(t.http).get('/api/docs-json').expect(200);
    await request(t.http).get('/api/docs/').expect(200);
    const unknownFile = await request(t.http).get('/api/docs/x').expect(404);
    expect(unknownFile.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
    // The scrape and the OpenAPI pages are outside the OpenAPI document, yet a wrong method on them is still a 405.
    for (const path of ['/metrics', '/api/docs-json', '/api/docs']) {
      const res = await request(t.http).post(path).expect(405);
      expect(res.body).toMatchObject({ success: false, code: 'METHOD_NOT_ALLOWED' });
      expect(res.headers.allow).toBe('GET');
    }
  });

  it('refuses JavaScript object member names as body keys, anywhere in the body (the validator dropped them silently)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ email: 'k@example.test', password: 'correct horse battery', displayName: 'K', toString: 'x' }, 'toString'],
      [{ email: 'k@example.test', password: 'correct horse battery', displayName: 'K', extra: [{ constructor: 1 }] }, 'extra[0].constructor'],
    ];
    for (const [body, field] of cases) {
      const res = await request(t.http).post('/api/v1/auth/register').send(body).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field, reason: expect.stringContaining('is reserved') } });
    }
    const proto = await request(t.http).post('/api/v1/auth/register').set('Content-Type', 'application/json').send('{"email":"k@example.test","__proto__":{"isAdmin":true}}').expect(400);
    expect(proto.body.details).toMatchObject({ field: '__proto__' });
  });

  it('refuses text that is not well-formed Unicode (a lone surrogate) anywhere in a body, instead of a 500', async () => {
    // Raw JSON: the escapes reach the parser as written. isEmail choked on "\ud800" (URIError, 500), on a public route.
    const cases: Array<[string, string]> = [
      ['{"email":"\\ud800@example.com","password":"correct horse battery"}', 'email'],
      ['{"email":"k@example.test","password":"correct horse battery","displayName":"a\\udc00b"}', 'displayName'],
      ['{"email":"k@example.test","password":"correct horse battery","extra":[{"\\ud83d":1}]}', 'extra[0].\\ud83d'],
    ];
    for (const [body, field] of cases) {
      const res = await request(t.http).post('/api/v1/auth/register').set('Content-Type', 'application/json').send(body).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field, reason: expect.stringContaining('well-formed Unicode') } });
    }
    // A surrogate pair (an emoji) is fine.
    const emoji = await request(t.http).post('/api/v1/auth/register').set('Content-Type', 'application/json').send('{"email":"emoji@example.test","password":"correct horse battery","displayName":"\\ud83d\\ude00"}').expect(201);
    expect(emoji.body.payload.user.displayName).toBe('\u{1F600}');
  });

  it('reads integer query parameters as decimal digits only, and names the type problem first', async () => {
    const user = await registerUser(t.http);
    for (const page of ['abc', '0x10', '1e2', '%2B2', '2.5']) {
      const res = await request(t.http).get(`/api/v1/users/me/organizations?page=${page}`).set(bearer(user)).expect(400);
      expect(problemsOf(res.body)).toEqual([{ field: 'page', reason: 'page must be an integer number' }]);
    }
    const repeated = await request(t.http).get('/api/v1/users/me/organizations?page=1&page=2').set(bearer(user)).expect(400);
    expect(problemsOf(repeated.body)).toEqual([{ field: 'page', reason: 'page must be an integer number' }]);
    const range = await request(t.http).get('/api/v1/users/me/organizations?pageSize=101').set(bearer(user)).expect(400);
    expect(problemsOf(range.body)).toEqual([{ field: 'pageSize', reason: 'pageSize must not be greater than 100' }]);
    await request(t.http).get('/api/v1/users/me/organizations?page=1&pageSize=5').set(bearer(user)).expect(200);
  });

  it('names every invalid field and rejects unknown fields', async () => {
    const res = await request(t.http)
      .post('/api/v1/auth/register')
      .send({ email: 'not-an-email', password: 5, displayName: 'x', isAdmin: true })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const fields = problemsOf(res.body).map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['email', 'password', 'isAdmin']));
  });

  it('reports a missing required field once, as required, not by the checks its value would have failed', async () => {
    const res = await request(t.http)
      .post('/api/v1/auth/register')
      .send({ email: 'someone@example.test' })
      .expect(400);
    const problems = problemsOf(res.body) as { field: string; reason: string }[];
    expect(problems.filter((problem) => problem.field === 'password')).toEqual([
      { field: 'password', reason: 'password is required' },
    ]);
    expect(problems.filter((problem) => problem.field === 'email')).toEqual([]);
  });

  it('answers a body over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await request(t.http)
      .post('/api/v1/auth/register')
      .send({ email: 'a@b.co', password: 'x'.repeat(5000), displayName: 'x' })
      .expect(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers a missing token with 401 UNAUTHORIZED and a bad one with 401 INVALID_TOKEN, each with its Bearer challenge', async () => {
    const missing = await request(t.http).get('/api/v1/users/me').expect(401);
    expect(missing.body.code).toBe('UNAUTHORIZED');
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="quire"');
    const forged = 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.';
    const bad = await request(t.http)
      .get('/api/v1/users/me')
      .set('Authorization', `Bearer ${forged}`)
      .expect(401);
    expect(bad.body.code).toBe('INVALID_TOKEN');
    expect(bad.headers['www-authenticate']).toBe('Bearer realm="quire", error="invalid_token"');
  });

  it('serves the current user to a registered account', async () => {
    const user = await registerUser(t.http);
    const res = await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(200);
    expect(res.body.payload).toMatchObject({
      id: user.id,
      email: user.email,
      defaultOrganizationId: expect.any(String),
      defaultWorkspaceId: expect.any(String),
    });
  });

  /** Sends raw bytes and reads until the server closes the connection (fails if it never does). */
  async function rawExchange(bytes: string): Promise<{ status: number; headers: string; body: string }> {
    const port = Number(new URL(await listening(t)).port);
    const { connect } = await import('node:net');
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => reject(new Error('the server kept the connection open')), 5000);
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
    });
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    return { status: Number(head.split(' ')[1]), headers: head, body };
  }

  it('answers a request line and headers over Node\'s limit with the 431 envelope and closes the connection', async () => {
    for (const bytes of [
      `GET /api/v1/users/me?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /api/v1/users/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ]) {
      const res = await rawExchange(bytes);
      expect(res.status).toBe(431);
      expect(res.headers).toMatch(/content-type: application\/json/i);
      expect(JSON.parse(res.body)).toMatchObject({
        success: false,
        code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
        message: expect.objectContaining({ en: expect.any(String), zh: expect.any(String) }),
        payload: null,
        details: { reason: expect.any(String) },
      });
    }
  });

  it('answers a malformed request line with the 400 envelope and closes the connection', async () => {
    const res = await rawExchange('GARBAGE\r\n\r\n');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ success: false, code: 'VALIDATION_ERROR', payload: null, details: { reason: 'malformed HTTP request' } });
  });

  it('echoes X-Request-Id, or generates one', async () => {
    const given = await request(t.http).get('/health').set('X-Request-Id', 'abc-123').expect(200);
    expect(given.headers['x-request-id']).toBe('abc-123');
    const generated = await request(t.http).get('/health').expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    // Also on the answers given before routing: body refused by the parsers, unknown paths (they had none).
    const refused = [
      await request(t.http).post('/api/v1/auth/login').set('X-Request-Id', 'abc-124').set('Content-Type', 'application/json').send('{"email":').expect(400),
      await request(t.http).post('/api/v1/auth/login').set('X-Request-Id', 'abc-124').set('Content-Type', 'application/xml').send('<a/>').expect(415),
      await request(t.http).post('/api/v1/auth/login').set('X-Request-Id', 'abc-124').set('Content-Type', 'application/json').send(`{"x":"${'a'.repeat(6 * 1024 * 1024)}"}`).expect(413),
      await request(t.http).get('/users/me').set('X-Request-Id', 'abc-124').expect(404),
    ];
    expect(refused.map((res) => res.headers['x-request-id'])).toEqual(['abc-124', 'abc-124', 'abc-124', 'abc-124']);
  });
});
