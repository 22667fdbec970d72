import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { SessionService } from './session.service.js';

/** What stands behind a credential, without its secret: the session, the API key or the OAuth client it came from. */
export interface CredentialReference {
  sessionId?: string;
  apiKeyId?: string;
  /** For OAuth tokens without a session (client credentials): the client must still exist. */
  clientId?: string;
  kind?: string;
}

/**
 * Whether a credential presented earlier still stands: its session is active, its API key neither revoked nor
 * expired, its OAuth client not deleted. For holders of long-lived connections (realtime streams and sockets) that
 * re-check access without keeping the credential itself.
 */
@Injectable()
export class CredentialStatusService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly sessions: SessionService,
  ) {}

  async isActive(reference: CredentialReference): Promise<boolean> {
    if (reference.sessionId) {
      return this.sessions.isActive(reference.sessionId);
    }
    if (reference.apiKeyId) {
      const rows = await this.tx.manager.query<unknown[]>(
        'SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())',
        [reference.apiKeyId],
      );
      return rows.length > 0;
    }
    if (reference.kind === 'oauth' && reference.clientId) {
      const rows = await this.tx.manager.query<unknown[]>('SELECT 1 FROM oauth_clients WHERE client_id = $1', [reference.clientId]);
      return rows.length > 0;
    }
    return true;
  }

  /**
   * When the credential ends by itself, in epoch seconds: an API key's `expires_at` (fixed at creation). Undefined
   * for a key without one and for other credentials (an access token's expiry is in the token itself).
   */
  async expiresAt(reference: CredentialReference): Promise<number | undefined> {
    if (!reference.apiKeyId) {
      return undefined;
    }
    const rows = await this.tx.manager.query<Array<{ expires_at: Date | null }>>(
      'SELECT expires_at FROM api_keys WHERE id = $1',
      [reference.apiKeyId],
    );
    const expiresAt = rows[0]?.expires_at;
    return expiresAt ? Math.floor(new Date(expiresAt).getTime() / 1000) : undefined;
  }
}
