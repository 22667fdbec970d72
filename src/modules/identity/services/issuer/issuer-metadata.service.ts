import { Injectable } from '@nestjs/common';
import type { JWK } from 'jose';
import type { Principal } from '../../../../common/auth/principal.js';
import { SCOPES } from '../../../../common/auth/principal.js';
import { SigningKeyService } from '../signing-key.service.js';
import { TokenService } from '../token.service.js';
import { UsersService } from '../users.service.js';

export interface DiscoveryDocument {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
  scopes_supported: string[];
  response_types_supported: string[];
  response_modes_supported: string[];
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  code_challenge_methods_supported: string[];
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: string[];
  claims_supported: string[];
}

export interface UserInfoClaims {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string;
  locale?: string;
  zoneinfo?: string;
  updated_at?: number;
}

/** Discovery (spec 5.4), the key set and /userinfo. Discovery lists exactly what the issuer implements. */
@Injectable()
export class IssuerMetadataService {
  constructor(
    private readonly tokens: TokenService,
    private readonly keys: SigningKeyService,
    private readonly users: UsersService,
  ) {}

  discovery(): DiscoveryDocument {
    const issuer = this.tokens.issuer;
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      jwks_uri: `${issuer}/jwks.json`,
      scopes_supported: [...SCOPES],
      response_types_supported: ['code', 'token'],
      response_modes_supported: ['query', 'fragment'],
      grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      claims_supported: [
        'sub',
        'iss',
        'aud',
        'exp',
        'iat',
        'auth_time',
        'nonce',
        'azp',
        'email',
        'email_verified',
        'name',
        'picture',
        'locale',
        'zoneinfo',
        'updated_at',
      ],
    };
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    // Make sure a key exists before the first token is ever signed, so the set is never empty.
    await this.keys.signingKey();
    return { keys: await this.keys.publicJwks() };
  }

  /** OpenID Connect claims of the token's user, limited by its scopes (`email`, `profile`). */
  async userinfo(principal: Principal): Promise<UserInfoClaims> {
    const user = await this.users.getById(principal.userId);
    const claims: UserInfoClaims = { sub: user.id };
    if (principal.scopes.includes('email')) {
      claims.email = user.email;
      claims.email_verified = false;
    }
    if (principal.scopes.includes('profile')) {
      claims.name = user.displayName;
      claims.updated_at = Math.floor(new Date(user.updatedAt).getTime() / 1000);
      if (user.avatarUrl) {
        claims.picture = user.avatarUrl;
      }
      if (user.locale) {
        claims.locale = user.locale;
      }
      if (user.timezone) {
        claims.zoneinfo = user.timezone;
      }
    }
    return claims;
  }
}
