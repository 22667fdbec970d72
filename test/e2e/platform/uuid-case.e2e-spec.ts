import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createDocument, createRow } from '../documents/documents.fixtures.js';

/** UUIDs are case-insensitive (RFC 9562): an id in upper case names the same thing as in lower case. */
describe('ids in upper case', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await registerUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers every route naming an organization or workspace id in upper case as in lower case', async () => {
    const org = owner.defaultOrganizationId.toUpperCase();
    const ws = owner.defaultWorkspaceId.toUpperCase();
    const doc = await createDocument(t.http, owner);
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'One' } });
    const paths = [
      `/api/v1/organizations/${org}`,
      `/api/v1/organizations/${org}/members`,
      `/api/v1/organizations/${org}/invitations`,
      `/api/v1/organizations/${org}/workspaces`,
      `/api/v1/organizations/${org}/workspaces/${ws}`,
      `/api/v1/organizations/${org}/workspaces/${ws}/members`,
      `/api/v1/organizations/${org}/workspaces/${ws}/data-source-references`,
      `/api/v1/doc/${doc.docType}/${doc.docId}/data?workspaceId=${ws}`,
      `/api/v1/doc/${doc.docType}/${doc.docId}/data?organizationId=${org}&workspaceId=${ws}`,
      `/api/v1/doc/${doc.docType}?workspaceId=${ws}`,
      `/api/v1/doc/${doc.docType}/setting?workspaceId=${ws}`,
      `/api/v1/webhooks?organizationId=${org}`,
    ];
    const statuses: Record<string, number> = {};
    for (const path of paths) {
      statuses[path] = (await request(t.http).get(path).set(bearer(owner))).status;
    }
    expect(statuses).toEqual(Object.fromEntries(paths.map((path) => [path, 200])));
    const headers = await request(t.http).get(`/api/v1/doc/${doc.docType}/${doc.docId}/data`).set(bearer(owner)).set('X-Workspace-Id', ws);
    expect(headers.status).toBe(200);
  });
});
