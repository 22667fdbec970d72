import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle, newUser } from '../documents/documents.fixtures.js';

/** `parentId: null` is a top-level comment, as leaving it out is; the OpenAPI says which bodies are optional. */
describe('comments: parentId null and the declared responses', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner);
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a top-level comment with parentId null', async () => {
    const res = await request(t.http)
      .post(`${doc.path}/comments`)
      .set(bearer(owner))
      .send({ target: { scope: 'document' }, content: 'top level', parentId: null })
      .expect(201);
    expect(res.body.payload).toMatchObject({ parentId: null, content: 'top level' });
    const reply = await request(t.http).post(`${doc.path}/comments`).set(bearer(owner)).send({ content: 'reply', parentId: res.body.payload.id }).expect(201);
    expect(reply.body.payload.parentId).toBe(res.body.payload.id);
  });

  it('declares the 409 of POST /comments and POST /views and an optional reaction body', () => {
    const paths = t.openApi.paths;
    const base = '/api/v1/doc/{docType}/{docId}';
    expect(Object.keys(paths[`${base}/comments`]?.post?.responses ?? {})).toContain('409');
    expect(Object.keys(paths[`${base}/views`]?.post?.responses ?? {})).toContain('409');
    const body = paths[`${base}/comments/{commentId}/reactions`]?.post?.requestBody as { required?: boolean } | undefined;
    expect(body?.required).not.toBe(true);
  });
});
