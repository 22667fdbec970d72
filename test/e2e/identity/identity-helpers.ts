import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import type { TestUser } from '../../factories/users.factory.js';

/** The hidden and named inputs of an HTML form, by name. */
export function formFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input[^>]*\bname="([^"]+)"[^>]*\bvalue="([^"]*)"/g)) {
    fields[match[1]] = match[2].replace(/&#(\d+);/g, (_all, code: string) =>
      String.fromCharCode(Number(code)),
    );
  }
  return fields;
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface TestClient {
  clientId: string;
  clientSecret: string;
}

export async function createClient(
  http: App,
  owner: { token: string },
  body: Partial<{ name: string; redirectUris: string[]; allowedScopes: string[]; grantTypes: string[] }> = {},
): Promise<TestClient> {
  const response = await request(http)
    .post('/api/v1/oauth/clients')
    .set('Authorization', `Bearer ${owner.token}`)
    .send({
      name: 'Test client',
      redirectUris: ['http://127.0.0.1/callback'],
      allowedScopes: ['openid', 'profile', 'email', 'doc:read', 'data:read'],
      grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
      ...body,
    });
  if (response.status !== 201) {
    throw new Error(`client create failed: ${response.status} ${JSON.stringify(response.body)}`);
  }
  return { clientId: response.body.payload.clientId, clientSecret: response.body.payload.clientSecret };
}

/**
 * Runs the /authorize pages without a browser: GET the sign-in page, post the password, approve (or deny).
 * Returns the redirect Location.
 */
export async function authorizeWithForms(
  http: App,
  query: Record<string, string>,
  user: Pick<TestUser, 'email' | 'password'>,
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const page = await request(http).get('/authorize').query(query);
  if (page.status !== 200) {
    throw new Error(`authorize page: ${page.status} ${page.headers.location ?? page.text}`);
  }
  const signIn = formFields(page.text);
  const consent = await request(http)
    .post('/authorize')
    .type('form')
    .send({ step: 'login', request: signIn.request, email: user.email, password: user.password });
  if (consent.status !== 200) {
    throw new Error(`sign-in step: ${consent.status} ${consent.text}`);
  }
  const fields = formFields(consent.text);
  const done = await request(http)
    .post('/authorize')
    .type('form')
    .send({ step: 'consent', request: fields.request, consent: fields.consent, decision });
  if (done.status !== 303) {
    throw new Error(`consent step: ${done.status} ${done.text}`);
  }
  return new URL(done.headers.location);
}

/** A form POST to /token. */
export function tokenRequest(http: App, form: Record<string, string>, basic?: TestClient): request.Test {
  const req = request(http).post('/token').type('form');
  if (basic) {
    req.set(
      'Authorization',
      `Basic ${Buffer.from(`${encodeURIComponent(basic.clientId)}:${encodeURIComponent(basic.clientSecret)}`).toString('base64')}`,
    );
  }
  return req.send(form);
}
