import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import type { OidcContext } from 'oidc-provider';
import { freePort } from '../../../src/database/embedded-postgres.js';

export interface IdpAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Every redirect URI registered for the client: `redirectUri` and the extra ones the test asked for. */
  redirectUris: string[];
  accounts: Map<string, IdpAccount>;
  /** Follows the provider's redirects as `accountId` signing in, until it sends the browser back; returns that URL. */
  signIn(authorizationUrl: string, accountId: string): Promise<URL>;
  /** The account the provider's interaction signs in when a real browser drives it. */
  signInNextAs(accountId: string): void;
  close(): Promise<void>;
}

/**
 * A real OpenID provider (panva's oidc-provider) on loopback for third-party login tests. Its interaction
 * step signs in whichever account the test names, and consent is granted automatically. `extraRedirectUris`
 * are registered for the client next to the API flow's `redirectUri` (the issuer page's callback, say).
 */
export async function startTestIdp(extraRedirectUris: string[] = []): Promise<TestIdp> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'quire-rp';
  const clientSecret = 'quire-rp-secret-0123456789abcdef';
  const redirectUri = 'http://127.0.0.1:5173/login/callback';
  const redirectUris = [redirectUri, ...extraRedirectUris];
  const accounts = new Map<string, IdpAccount>();
  let current = '';

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  // oidc-provider announces development defaults (and Node versions it prefers) on the console; keep the run quiet.
  const warn = console.warn;
  console.warn = (...args: unknown[]) =>
    String(args[0]).startsWith('oidc-provider') ? undefined : warn(...args);
  const { default: Provider } = await import('oidc-provider');
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'idp-1', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['test-idp-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: () => ({ sub, ...accounts.get(sub) }),
    }),
    loadExistingGrant: async (ctx: OidcContext) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  console.warn = warn;
  const handle = provider.callback();
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      provider
        .interactionFinished(req, res, { login: { accountId: current } }, { mergeWithLastSubmission: false })
        .catch((error: unknown) => {
          res.statusCode = 500;
          res.end(String(error));
        });
      return;
    }
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));

  async function signIn(authorizationUrl: string, accountId: string): Promise<URL> {
    current = accountId;
    const cookies = new Map<string, string>();
    let url = authorizationUrl;
    for (let hop = 0; hop < 10; hop += 1) {
      const response = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair.indexOf('=');
        cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
      }
      const location = response.headers.get('location');
      if (!location) {
        throw new Error(`identity provider stopped at ${url}: ${response.status} ${await response.text()}`);
      }
      const next = new URL(location, url);
      if (redirectUris.some((registered) => next.href.startsWith(registered))) {
        return next;
      }
      url = next.href;
    }
    throw new Error('identity provider redirected too often');
  }

  return {
    issuer,
    clientId,
    clientSecret,
    redirectUri,
    redirectUris,
    accounts,
    signIn,
    signInNextAs: (accountId: string) => {
      current = accountId;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
