import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { freePort } from '../../../src/database/embedded-postgres.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createClient, pkcePair, type TestClient, tokenRequest } from './identity-helpers.js';
import { startTestIdp, type TestIdp } from './test-idp.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

if (!existsSync(CHROMIUM)) {
  describe('the /authorize page in headless Chromium', () => {
    it.skip(`skipped: ${CHROMIUM} is absent (install Debian's chromium package to run this test)`, () =>
      undefined);
  });
} else {
  describe('the /authorize page in headless Chromium', () => {
    let t: TestApp;
    let browser: Browser;
    let issuer: string;
    let user: TestUser;
    let client: TestClient;
    let redirectUri: string;

    beforeAll(async () => {
      const port = await freePort();
      issuer = `http://127.0.0.1:${port}`;
      t = await createTestApp({ PUBLIC_BASE_URL: issuer, AUTH_ISSUER_URL: issuer });
      await t.app.listen(port, '127.0.0.1');
      user = await registerUser(t.http);
      redirectUri = `${issuer}/health`;
      client = await createClient(t.http, user, {
        redirectUris: [redirectUri],
        allowedScopes: ['openid', 'email', 'doc:read'],
      });
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    });
    afterAll(async () => {
      await browser?.close();
      await t?.close();
    });

    function authorizeUrl(state: string, challenge: string): string {
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: redirectUri,
        scope: 'openid email doc:read',
        state,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      return `${issuer}/authorize?${query.toString()}`;
    }

    it('signs in, shows the consent, redirects back with code and state, and the code buys tokens', async () => {
      const page = await browser.newPage();
      const { verifier, challenge } = pkcePair();
      await page.goto(authorizeUrl('browser-state', challenge));
      expect(await page.textContent('h1')).toContain('Test client');

      // A wrong password shows the form again with an error.
      await page.fill('input[name=email]', user.email);
      await page.fill('input[name=password]', 'not the password');
      await page.click('button[type=submit]');
      expect(await page.textContent('[role=alert]')).toContain('not correct');

      await page.fill('input[name=password]', user.password);
      await page.click('button[type=submit]');
      await page.waitForSelector('#approve');
      const scopes = await page.textContent('#scopes');
      expect(scopes).toContain('doc:read');
      expect(scopes).toContain('email');

      await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.click('#approve')]);
      const back = new URL(page.url());
      expect(back.searchParams.get('state')).toBe('browser-state');
      const code = back.searchParams.get('code');
      expect(code).toMatch(/^qac_/);
      await page.close();

      const tokens = await tokenRequest(
        t.http,
        {
          grant_type: 'authorization_code',
          code: code ?? '',
          redirect_uri: redirectUri,
          code_verifier: verifier,
        },
        client,
      ).expect(200);
      const info = await request(t.http)
        .get('/userinfo')
        .set('Authorization', `Bearer ${tokens.body.access_token}`)
        .expect(200);
      expect(info.body).toMatchObject({ sub: user.id, email: user.email });
    });

    it('denying redirects back with error=access_denied', async () => {
      const page = await browser.newPage();
      await page.goto(authorizeUrl('deny-state', pkcePair().challenge));
      await page.fill('input[name=email]', user.email);
      await page.fill('input[name=password]', user.password);
      await page.click('button[type=submit]');
      await page.waitForSelector('#deny');
      await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.click('#deny')]);
      const back = new URL(page.url());
      expect(back.searchParams.get('error')).toBe('access_denied');
      expect(back.searchParams.get('state')).toBe('deny-state');
      await page.close();
    });
  });

  describe('third-party sign-in on the /authorize page in headless Chromium', () => {
    let t: TestApp;
    let idp: TestIdp;
    let browser: Browser;
    let issuer: string;
    let client: TestClient;
    let redirectUri: string;

    beforeAll(async () => {
      const port = await freePort();
      issuer = `http://127.0.0.1:${port}`;
      idp = await startTestIdp([`${issuer}/api/v1/auth/authorize/oauth/google/callback`]);
      idp.accounts.set('paula', { email: 'paula@idp.test', email_verified: true, name: 'Paula Idp' });
      t = await createTestApp({
        PUBLIC_BASE_URL: issuer,
        AUTH_ISSUER_URL: issuer,
        ADMIN_EMAILS: 'browser-admin@example.test',
        ENCRYPTION_KEY: 'test-encryption-key',
      });
      await t.app.listen(port, '127.0.0.1');
      const admin = await registerUser(t.http, { email: 'browser-admin@example.test' });
      await request(t.http)
        .post('/api/v1/admin/oidc/providers')
        .set(bearer(admin))
        .send({
          provider: 'google',
          issuer: idp.issuer,
          clientId: idp.clientId,
          clientSecret: idp.clientSecret,
        })
        .expect(201);
      redirectUri = `${issuer}/health`;
      client = await createClient(t.http, admin, {
        redirectUris: [redirectUri],
        allowedScopes: ['openid', 'email'],
      });
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    });
    afterAll(async () => {
      await browser?.close();
      await t?.close();
      await idp?.close();
    });

    it('"Sign in with Google" goes through the provider to the consent and back to the client, under the CSP', async () => {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (message.text().includes('Content Security Policy')) {
          violations.push(message.text());
        }
      });
      const { verifier, challenge } = pkcePair();
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: redirectUri,
        scope: 'openid email',
        state: 'provider-state',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      await page.goto(`${issuer}/authorize?${query.toString()}`);
      idp.signInNextAs('paula');
      await Promise.all([page.waitForSelector('#approve'), page.click('#provider-google')]);
      expect(page.url().startsWith(`${issuer}/api/v1/auth/authorize/oauth/google/callback`)).toBe(true);
      expect(await page.textContent('main')).toContain('paula@idp.test');

      await Promise.all([page.waitForURL((url) => url.href.startsWith(redirectUri)), page.click('#approve')]);
      const back = new URL(page.url());
      expect(back.searchParams.get('state')).toBe('provider-state');
      await page.close();
      expect(violations).toEqual([]);

      const tokens = await tokenRequest(
        t.http,
        {
          grant_type: 'authorization_code',
          code: back.searchParams.get('code') ?? '',
          redirect_uri: redirectUri,
          code_verifier: verifier,
        },
        client,
      ).expect(200);
      const info = await request(t.http)
        .get('/userinfo')
        .set('Authorization', `Bearer ${tokens.body.access_token}`)
        .expect(200);
      expect(info.body.email).toBe('paula@idp.test');
    });
  });
}
