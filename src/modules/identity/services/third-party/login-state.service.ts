import { Injectable } from '@nestjs/common';
import * as oidc from 'openid-client';
import { TransactionHost } from '../../../../database/transaction-host.js';
import type { OAuthProvider } from '../../entities/oidc-provider.entity.js';
import { returnedRows } from '../../../../database/sql-result.js';

/** A third-party sign-in started here is valid this long. */
export const LOGIN_STATE_TTL_SECONDS = 10 * 60;

export interface LoginState {
  state: string;
  codeVerifier: string;
  nonce: string;
  redirectUri: string;
  userId: string | null;
}

/** A state started from the issuer's /authorize page: it carries that page's authorization-request token. */
export interface AuthorizePageLoginState extends LoginState {
  authorizeRequestToken: string;
}

interface StateRow {
  state: string;
  code_verifier: string;
  nonce: string;
  redirect_uri: string;
  user_id: string | null;
  authorize_request_token: string | null;
}

const RETURNED = 'state, code_verifier, nonce, redirect_uri, user_id, authorize_request_token';

function toState(row: StateRow): LoginState {
  return {
    state: row.state,
    codeVerifier: row.code_verifier,
    nonce: row.nonce,
    redirectUri: row.redirect_uri,
    userId: row.user_id,
  };
}

/**
 * The `state`, PKCE verifier and nonce of a third-party sign-in, kept between the authorize step and the
 * callback (or bind). `userId` is set when a signed-in user started it to bind the provider. Single use.
 *
 * States of the API flow and states of the /authorize page are kept apart: each kind is consumed only by
 * its own callback, so a page state cannot buy first-party API tokens and an API state cannot resume (or
 * hijack) an authorization interaction.
 */
@Injectable()
export class LoginStateService {
  constructor(private readonly tx: TransactionHost) {}

  /** A state of the API flow (sign-in, or binding when `userId` is set). */
  create(provider: OAuthProvider, redirectUri: string, userId: string | null): Promise<LoginState> {
    return this.insert(provider, redirectUri, userId, null);
  }

  /** A state of the /authorize page: the provider's return resumes the interaction `authorizeRequestToken` names. */
  async createForAuthorizePage(
    provider: OAuthProvider,
    redirectUri: string,
    authorizeRequestToken: string,
  ): Promise<AuthorizePageLoginState> {
    const state = await this.insert(provider, redirectUri, null, authorizeRequestToken);
    return { ...state, authorizeRequestToken };
  }

  /**
   * Uses up a sign-in state of the API flow for `provider`; null when unknown, expired, used, a page state or a
   * bind state (one a signed-in user started to bind the provider: signing in with it instead would make or enter
   * the identity's own account and spend the bind). A refused state is not used up.
   */
  async consume(provider: OAuthProvider, state: string): Promise<LoginState | null> {
    const [row] = returnedRows<StateRow>(
      await this.tx.manager.query(
        `UPDATE oauth_login_states SET used_at = now()
          WHERE state = $1 AND provider = $2 AND used_at IS NULL AND expires_at > now()
            AND authorize_request_token IS NULL AND user_id IS NULL
          RETURNING ${RETURNED}`,
        [state, provider],
      ),
    );
    return row ? toState(row) : null;
  }

  /** Uses up a /authorize-page state of `provider`; null when unknown, expired, used or an API-flow state. */
  async consumeForAuthorizePage(
    provider: OAuthProvider,
    state: string,
  ): Promise<AuthorizePageLoginState | null> {
    const [row] = returnedRows<StateRow>(
      await this.tx.manager.query(
        `UPDATE oauth_login_states SET used_at = now()
          WHERE state = $1 AND provider = $2 AND used_at IS NULL AND expires_at > now()
            AND authorize_request_token IS NOT NULL
          RETURNING ${RETURNED}`,
        [state, provider],
      ),
    );
    return row?.authorize_request_token
      ? { ...toState(row), authorizeRequestToken: row.authorize_request_token }
      : null;
  }

  /**
   * Uses up a bind state `userId` started for `provider`; null when unknown, expired, used, a sign-in or page
   * state, or another user's. Only the owner's request uses it up: one refused for someone else leaves it to
   * its owner (docs/auth.md: a refused state is not used up).
   */
  async consumeForUser(provider: OAuthProvider, state: string, userId: string): Promise<LoginState | null> {
    const [row] = returnedRows<StateRow>(
      await this.tx.manager.query(
        `UPDATE oauth_login_states SET used_at = now()
          WHERE state = $1 AND provider = $2 AND user_id = $3 AND used_at IS NULL AND expires_at > now()
            AND authorize_request_token IS NULL
          RETURNING ${RETURNED}`,
        [state, provider, userId],
      ),
    );
    return row ? toState(row) : null;
  }

  /** The newest unused bind state the user started for `provider`, used up. */
  async consumeLatestForUser(provider: OAuthProvider, userId: string): Promise<LoginState | null> {
    const [row] = returnedRows<StateRow>(
      await this.tx.manager.query(
        `UPDATE oauth_login_states SET used_at = now()
          WHERE state = (SELECT state FROM oauth_login_states
                          WHERE provider = $1 AND user_id = $2 AND used_at IS NULL AND expires_at > now()
                          ORDER BY created_at DESC LIMIT 1)
          RETURNING ${RETURNED}`,
        [provider, userId],
      ),
    );
    return row ? toState(row) : null;
  }

  private async insert(
    provider: OAuthProvider,
    redirectUri: string,
    userId: string | null,
    authorizeRequestToken: string | null,
  ): Promise<LoginState> {
    const state: LoginState = {
      state: oidc.randomState(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
      nonce: oidc.randomNonce(),
      redirectUri,
      userId,
    };
    await this.tx.manager.query(
      `INSERT INTO oauth_login_states
         (state, provider, code_verifier, nonce, redirect_uri, user_id, authorize_request_token, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
      [
        state.state,
        provider,
        state.codeVerifier,
        state.nonce,
        redirectUri,
        userId,
        authorizeRequestToken,
        LOGIN_STATE_TTL_SECONDS,
      ],
    );
    return state;
  }
}
