import { randomUUID } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { ConnectionRecord } from '../../supply-chain/domain/supply-chain.types.js';
import { ShareScopeChanges } from '../../supply-chain/services/share-scope-changes.js';
import { ReconcileScheduler } from '../services/reconcile-scheduler.service.js';
import { SupplyChainPort } from '../services/supply-chain.port.js';

/**
 * Spec 3 rule 2 ("rows outside [the share scope] are not propagated") for the rows already shared when the
 * supplier changes a connection's share scope: every active binding of the connection gets a reconcile job, in the
 * transaction of the change (one per change: its trigger key), so rows now in scope arrive and rows now outside it
 * are withdrawn as a change of each row would (docs/supply-chain.md, "Initial sync and reconcile").
 */
@Injectable()
export class ShareScopeChangedListener implements OnModuleInit {
  constructor(
    private readonly changes: ShareScopeChanges,
    private readonly port: SupplyChainPort,
    private readonly reconciles: ReconcileScheduler,
  ) {}

  onModuleInit(): void {
    this.changes.onChanged((connection) => this.reconcileBindings(connection));
  }

  private async reconcileBindings(connection: ConnectionRecord): Promise<void> {
    if (connection.status !== 'active') {
      return;
    }
    const triggerKey = `share_scope:${randomUUID()}`;
    for (const binding of await this.port.activeBindings(connection.id)) {
      await this.reconciles.schedule(binding, {
        kind: 'reconcile',
        reason: 'share_scope_changed',
        triggerKey,
      });
    }
  }
}
