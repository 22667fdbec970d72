import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../../database/transaction-host.js';
import { hashToken, newOpaqueToken } from '../secret-tokens.js';
import { SessionService } from '../session.service.js';
import { returnedRows } from '../../../../database/sql-result.js';

/** Authorization codes live 5 minutes (RFC 6749 recommends at most 10). */
export const AUTHORIZATION_CODE_TTL_SECONDS = 5 * 60;

export interface AuthorizationCodeGrant {
  codeHash: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scopes: string[];
  codeChallenge: string | null;
  nonce: string | null;
  authTime: Date;
}

interface CodeRow {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  scope: string;
  code_challenge: string | null;
  nonce: string | null;
  auth_time: Date;
}

/**
 * Authorization codes: stored hashed, bound to client, user, exact redirect URI, scopes and PKCE challenge,
 * single use. Presenting a used code again revokes the authorization it produced (RFC 6749 section 4.1.2).
 */
@Injectable()
export class AuthorizationCodeService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly sessions: SessionService,
  ) {}

  async issue(grant: Omit<AuthorizationCodeGrant, 'codeHash'>): Promise<string> {
    const code = newOpaqueToken('qac_');
    await this.tx.manager.query(
      `INSERT INTO oauth_authorization_codes
         (code_hash, client_id, user_id, redirect_uri, scope, code_challenge, nonce, auth_time, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9))`,
      [
        hashToken(code),
        grant.clientId,
        grant.userId,
        grant.redirectUri,
        grant.scopes.join(' '),
        grant.codeChallenge,
        grant.nonce,
        grant.authTime,
        AUTHORIZATION_CODE_TTL_SECONDS,
      ],
    );
    return code;
  }

  /**
   * Marks the code used and returns its grant; call inside the transaction that issues the tokens, so a
   * failed exchange leaves the code usable. Null when the code is unknown, expired, used or another client's.
   */
  async redeem(code: string, clientId: string): Promise<AuthorizationCodeGrant | null> {
    const [row] = returnedRows<CodeRow>(
      await this.tx.manager.query(
        `UPDATE oauth_authorization_codes SET used_at = now()
          WHERE code_hash = $1 AND client_id = $2 AND used_at IS NULL AND expires_at > now()
          RETURNING code_hash, client_id, user_id, redirect_uri, scope, code_challenge, nonce, auth_time`,
        [hashToken(code), clientId],
      ),
    );
    if (!row) {
      return null;
    }
    return {
      codeHash: row.code_hash,
      clientId: row.client_id,
      userId: row.user_id,
      redirectUri: row.redirect_uri,
      scopes: row.scope.split(' ').filter(Boolean),
      codeChallenge: row.code_challenge,
      nonce: row.nonce,
      authTime: new Date(row.auth_time),
    };
  }

  async attachSession(codeHash: string, sessionId: string): Promise<void> {
    await this.tx.manager.query(`UPDATE oauth_authorization_codes SET session_id = $2 WHERE code_hash = $1`, [
      codeHash,
      sessionId,
    ]);
  }

  /** A used code presented again: revoke what it produced. Runs in its own transaction so it sticks. */
  async revokeIfReplayed(code: string, clientId: string): Promise<boolean> {
    return this.tx.run(async () => {
      const [row] = await this.tx.manager.query<Array<{ session_id: string | null }>>(
        `SELECT session_id FROM oauth_authorization_codes WHERE code_hash = $1 AND client_id = $2 AND used_at IS NOT NULL`,
        [hashToken(code), clientId],
      );
      if (row?.session_id) {
        await this.sessions.revoke(row.session_id);
      }
      return row !== undefined;
    });
  }
}
