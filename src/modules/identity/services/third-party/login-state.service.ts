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

interface StateRow {
  state: string;
  code_verifier: string;
  nonce: string;
  redirect_uri: string;
  user_id: string | null;
}

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
 */
@Injectable()
export class LoginStateService {
  constructor(private readonly tx: TransactionHost) {}

  async create(provider: OAuthProvider, redirectUri: string, userId: string | null): Promise<LoginState> {
    const state: LoginState = {
      state: oidc.randomState(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
      nonce: oidc.randomNonce(),
      redirectUri,
      userId,
    };
    await this.tx.manager.query(
      `INSERT INTO oauth_login_states (state, provider, code_verifier, nonce, redirect_uri, user_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
      [state.state, provider, state.codeVerifier, state.nonce, redirectUri, userId, LOGIN_STATE_TTL_SECONDS],
    );
    return state;
  }

  /** Uses up a state of `provider`; null when unknown, expired or used. */
  async consume(provider: OAuthProvider, state: string): Promise<LoginState | null> {
    const [row] = returnedRows<StateRow>(
      await this.tx.manager.query(
        `UPDATE oauth_login_states SET used_at = now()
          WHERE state = $1 AND provider = $2 AND used_at IS NULL AND expires_at > now()
          RETURNING state, code_verifier, nonce, redirect_uri, user_id`,
        [state, provider],
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
          RETURNING state, code_verifier, nonce, redirect_uri, user_id`,
        [provider, userId],
      ),
    );
    return row ? toState(row) : null;
  }
}
