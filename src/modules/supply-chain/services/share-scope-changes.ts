import { Injectable } from '@nestjs/common';
import type { ConnectionRecord } from '../domain/supply-chain.types.js';

export type ShareScopeChangedListener = (connection: ConnectionRecord) => Promise<void>;

/**
 * Tells whoever registered (supply-chain-sync: a reconcile of every active binding) that a connection's share scope
 * changed, inside the transaction that changed it, so what they record commits or rolls back with the change
 * (docs/supply-chain.md, "Initial sync and reconcile"). As BindingActivations: SupplyChainModule cannot reach the
 * propagation ledger, which belongs to supply-chain-sync.
 */
@Injectable()
export class ShareScopeChanges {
  private readonly listeners: ShareScopeChangedListener[] = [];

  onChanged(listener: ShareScopeChangedListener): void {
    this.listeners.push(listener);
  }

  async changed(connection: ConnectionRecord): Promise<void> {
    for (const listener of this.listeners) {
      await listener(connection);
    }
  }
}
