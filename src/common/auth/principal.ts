/** Who is calling. Resolved once per request by the authentication guard and passed explicitly to services. */
export interface Principal {
  /** The user the request acts for. For a client-credentials token, the client's owner. */
  userId: string;
  /** How the caller proved itself: a first-party session, an OAuth client token or an API key. */
  kind: 'session' | 'oauth' | 'api_key';
  /** Scopes the credential grants; a first-party session carries every scope. */
  scopes: string[];
  clientId?: string;
  sessionId?: string;
  apiKeyId?: string;
  /** Token id (`jti`) when the credential is a JWT. */
  tokenId?: string;
}

/** Scopes of spec section 5.8, plus the OpenID ones discovery lists. */
export const SCOPES = [
  'doc:read',
  'doc:write',
  'data:read',
  'data:write',
  'views:manage',
  'comments:write',
  'approvals:manage',
  'requests:manage',
  'webhooks:manage',
  'openid',
  'profile',
  'email',
] as const;
export type Scope = (typeof SCOPES)[number];
