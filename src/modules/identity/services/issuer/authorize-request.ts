import type { OAuthClientEntity } from '../../entities/oauth-client.entity.js';
import { errorPage } from './authorize-page.renderer.js';
import type { OAuthErrorCode } from './oauth.exception.js';

/** What a step of the authorization page answers: a page, or a redirect (to the client or to a provider). */
export type PageResult =
  { kind: 'html'; status: number; html: string } | { kind: 'redirect'; location: string };

/** A validated authorization request, carried between the pages inside a signed interaction token. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  responseType: 'code' | 'token';
  /**
   * Where the answer goes: the `response_mode` asked for, else the response type's default (query for a code,
   * fragment for a token). Absent in request tokens signed before it existed: read it with `inFragment()`.
   */
  responseMode?: 'query' | 'fragment';
  scopes: string[];
  state?: string;
  nonce?: string;
  codeChallenge?: string;
}

/** True when the request's answer (approval, denial or error) goes in the redirect URI's fragment. */
export function inFragment(request: AuthorizationRequest): boolean {
  return (request.responseMode ?? (request.responseType === 'token' ? 'fragment' : 'query')) === 'fragment';
}

/** A query string or a posted form, as Express parses it (a repeated name arrives as an array). */
export type Query = Record<string, unknown>;

/** One value of a query or form: undefined when absent or empty, null when the name was given more than once. */
export function single(query: Query, name: string): string | undefined | null {
  const value = query[name];
  if (value === undefined || value === '') {
    return undefined;
  }
  return typeof value === 'string' ? value : null;
}

export function htmlPage(status: number, html: string): PageResult {
  return { kind: 'html', status, html };
}

/** `redirectUri` with `params` in its query, or in its fragment for the implicit grant. */
function withParams(redirectUri: string, params: URLSearchParams, asFragment: boolean): string {
  const url = new URL(redirectUri);
  if (asFragment) {
    url.hash = params.toString();
  } else {
    for (const [name, value] of params) {
      url.searchParams.set(name, value);
    }
  }
  return url.toString();
}

/** The redirect that ends an authorization: `code` or the token on approval (RFC 6749 4.1.2 / 4.2.2). */
export function clientRedirect(
  redirectUri: string,
  params: URLSearchParams,
  asFragment: boolean,
): PageResult {
  return { kind: 'redirect', location: withParams(redirectUri, params, asFragment) };
}

/** The error redirect of RFC 6749 4.1.2.1 / 4.2.2.1, with the request's `state` when it had one. */
export function errorRedirect(
  redirectUri: string,
  asFragment: boolean,
  error: OAuthErrorCode,
  description: string,
  state?: string,
): PageResult {
  const params = new URLSearchParams({ error, error_description: description });
  if (state !== undefined) {
    params.set('state', state);
  }
  return clientRedirect(redirectUri, params, asFragment);
}

/**
 * Validates GET /authorize's query for its registered `client` (RFC 6749 4.1.1 / 4.2.1, PKCE S256 only). A request whose client
 * or redirect URI cannot be trusted gets an error page (never a redirect to an unregistered address); any other
 * invalid request is redirected back with `error`.
 */
export function parseAuthorizationRequest(
  query: Query,
  client: OAuthClientEntity,
): AuthorizationRequest | PageResult {
  const redirectUri = single(query, 'redirect_uri');
  if (!redirectUri || !client.redirectUris.includes(redirectUri)) {
    return htmlPage(
      400,
      errorPage('Invalid redirect', 'redirect_uri is missing or not registered for this application.'),
    );
  }
  const responseType = single(query, 'response_type');
  const state = single(query, 'state');
  // Discovery lists response modes query and fragment: either may be asked for (OAuth 2.0 Multiple Response Type
  // Encoding Practices); errors go where the answer would, or to the response type's default when the mode is bad.
  const responseMode = single(query, 'response_mode');
  const knownMode = responseMode === 'query' || responseMode === 'fragment' ? responseMode : undefined;
  const tokenInQuery = responseType === 'token' && knownMode === 'query';
  const asFragment = ((tokenInQuery ? undefined : knownMode) ?? (responseType === 'token' ? 'fragment' : 'query')) === 'fragment';
  const fail = (error: OAuthErrorCode, description: string): PageResult =>
    errorRedirect(redirectUri, asFragment, error, description, typeof state === 'string' ? state : undefined);
  for (const name of [
    'response_type',
    'response_mode',
    'scope',
    'state',
    'nonce',
    'code_challenge',
    'code_challenge_method',
    'prompt',
  ]) {
    if (single(query, name) === null) {
      return fail('invalid_request', `${name} must be given once`);
    }
  }
  if (responseType !== 'code' && responseType !== 'token') {
    return fail('unsupported_response_type', 'response_type must be code or token');
  }
  if (responseMode !== undefined && knownMode === undefined) {
    return fail('invalid_request', 'response_mode must be query or fragment');
  }
  if (tokenInQuery) {
    return fail('invalid_request', 'an access token is never sent in the query; use response_mode=fragment');
  }
  if (!client.grantTypes.includes('authorization_code')) {
    return fail('unauthorized_client', 'this client may not use the authorization endpoint');
  }
  const requested = single(query, 'scope');
  const scopes = requested ? [...new Set(requested.split(' ').filter(Boolean))] : [...client.allowedScopes];
  const refused = scopes.filter((scope) => !client.allowedScopes.includes(scope));
  if (refused.length > 0) {
    return fail('invalid_scope', `scope not available to this client: ${refused.join(' ')}`);
  }
  const challenge = single(query, 'code_challenge') ?? undefined;
  const method = single(query, 'code_challenge_method') ?? undefined;
  if ((challenge !== undefined || method !== undefined) && method !== 'S256') {
    return fail('invalid_request', 'PKCE needs code_challenge_method=S256 (plain is not supported)');
  }
  if (challenge !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
    return fail('invalid_request', 'code_challenge must be a base64url SHA-256 value');
  }
  if (method !== undefined && challenge === undefined) {
    return fail('invalid_request', 'code_challenge is missing');
  }
  if ((single(query, 'prompt') ?? '').split(' ').includes('none')) {
    return fail('login_required', 'the issuer keeps no browser session; the user must sign in');
  }
  const nonce = single(query, 'nonce') ?? undefined;
  const request: AuthorizationRequest = {
    clientId: client.clientId,
    redirectUri,
    responseType,
    responseMode: asFragment ? 'fragment' : 'query',
    scopes,
  };
  if (typeof state === 'string') {
    request.state = state;
  }
  if (nonce) {
    request.nonce = nonce;
  }
  if (challenge) {
    request.codeChallenge = challenge;
  }
  return request;
}
