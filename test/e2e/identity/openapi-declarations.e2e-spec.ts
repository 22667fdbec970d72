import type { OpenAPIV3 } from 'openapi-types';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

/** The OpenAPI document declares the statuses identity and tenancy routes answer, and how they authenticate. */
describe('OpenAPI declarations of identity and tenancy routes', () => {
  let t: TestApp;
  let doc: OpenAPIV3.Document;

  beforeAll(async () => {
    t = await createTestApp();
    doc = t.openApi as OpenAPIV3.Document;
  });
  afterAll(async () => {
    await t.close();
  });

  function operation(method: 'get' | 'post' | 'delete', path: string): OpenAPIV3.OperationObject {
    const found = doc.paths[path]?.[method];
    if (!found) {
      throw new Error(`no ${method.toUpperCase()} ${path} in the document`);
    }
    return found;
  }

  it.each([
    ['post', '/api/v1/auth/register', '409'],
    ['post', '/api/v1/organizations', '409'],
    ['post', '/api/v1/organizations/{organizationId}/members', '409'],
    ['post', '/api/v1/organizations/{organizationId}/invitations', '409'],
    ['delete', '/api/v1/organizations/{organizationId}/invitations/{invitationId}', '409'],
    ['post', '/api/v1/organizations/{organizationId}/workspaces', '409'],
    ['post', '/api/v1/organizations/{organizationId}/workspaces/{workspaceId}/members', '409'],
    ['post', '/api/v1/organizations/{organizationId}/join-requests/{requestId}/approve', '409'],
    ['post', '/api/v1/organizations/{organizationId}/join-requests/{requestId}/reject', '409'],
    ['post', '/api/v1/organizations/{organizationId}/workspaces/{workspaceId}/archive', '409'],
    ['post', '/api/v1/organizations/{organizationId}/workspaces/{workspaceId}/restore', '409'],
    ['post', '/api/v1/api-keys/{keyId}/revoke', '404'],
    ['post', '/api/v1/oauth/clients/{clientId}/regenerate-secret', '404'],
    ['delete', '/api/v1/auth/sessions/{sessionId}', '404'],
    ['delete', '/api/v1/users/me/oauth/{provider}', '409'],
    ['delete', '/api/v1/users/me/oauth/{provider}', '404'],
    ['post', '/api/v1/auth/refresh', '401'],
    ['post', '/api/v1/admin/oidc/providers', '409'],
    // The steps that go to the provider: not configured or not enabled (404), not reachable (503).
    ['get', '/api/v1/auth/oauth/{provider}/authorize', '404'],
    ['get', '/api/v1/auth/oauth/{provider}/authorize', '503'],
    ['post', '/api/v1/auth/oauth/{provider}/callback', '404'],
    ['post', '/api/v1/auth/oauth/{provider}/callback', '503'],
    ['post', '/api/v1/users/me/oauth/{provider}', '404'],
    ['post', '/api/v1/users/me/oauth/{provider}', '503'],
    // A bearer token sent to the third-party authorize step is checked: not valid (401), not a session (403).
    ['get', '/api/v1/auth/oauth/{provider}/authorize', '401'],
    ['get', '/api/v1/auth/oauth/{provider}/authorize', '403'],
    // The provider's e-mail belongs to an unbound account (409); the account is over its failure limit (429).
    ['post', '/api/v1/auth/oauth/{provider}/callback', '409'],
    ['post', '/api/v1/auth/oauth/{provider}/callback', '429'],
    // The authorization page's third-party sign-in: the same failures, as pages.
    ['get', '/api/v1/auth/authorize/oauth/{provider}/callback', '409'],
    ['get', '/api/v1/auth/authorize/oauth/{provider}/callback', '429'],
    ['get', '/api/v1/auth/authorize/oauth/{provider}/callback', '503'],
    ['post', '/authorize', '503'],
    ['post', '/api/v1/auth/authorize', '503'],
  ] as const)('%s %s declares %s', (method, path, status) => {
    expect(Object.keys(operation(method, path).responses)).toContain(status);
  });

  it('the token endpoint takes the Authorization header as optional (client credentials may be form fields)', () => {
    for (const path of ['/token', '/api/v1/auth/token']) {
      const header = (operation('post', path).parameters ?? []).find(
        (p) =>
          (p as OpenAPIV3.ParameterObject).in === 'header' &&
          (p as OpenAPIV3.ParameterObject).name.toLowerCase() === 'authorization',
      ) as OpenAPIV3.ParameterObject | undefined;
      expect(header?.required ?? false).toBe(false);
    }
  });

  it('the third-party authorize step takes the bearer token as optional', () => {
    const security = operation('get', '/api/v1/auth/oauth/{provider}/authorize').security;
    expect(security).toEqual(expect.arrayContaining([{}, { bearer: [] }]));
    expect(security).toHaveLength(2);
  });
});
