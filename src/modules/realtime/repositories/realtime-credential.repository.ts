import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { CredentialBinding } from '../domain/realtime.types.js';

/**
 * Whether the credential behind a long-lived stream still stands, without holding the secret: its session is
 * active, its API key is neither revoked nor expired, or its OAuth client still exists. Read-only lookups of
 * identity's tables by primary key (identity exports no such check; docs/realtime.md, "Decisions").
 */
@Injectable()
export class RealtimeCredentialRepository {
  constructor(private readonly tx: TransactionHost) {}

  async isActive(binding: CredentialBinding): Promise<boolean> {
    if (binding.sessionId) {
      return this.exists(
        'SELECT 1 FROM sessions WHERE id = $1 AND revoked_at IS NULL AND expires_at > now()',
        binding.sessionId,
      );
    }
    if (binding.apiKeyId) {
      return this.exists(
        'SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())',
        binding.apiKeyId,
      );
    }
    if (binding.kind === 'oauth' && binding.clientId) {
      return this.exists('SELECT 1 FROM oauth_clients WHERE client_id = $1', binding.clientId);
    }
    return true;
  }

  private async exists(sql: string, id: string): Promise<boolean> {
    const rows = await this.tx.manager.query<unknown[]>(sql, [id]);
    return rows.length > 0;
  }
}
