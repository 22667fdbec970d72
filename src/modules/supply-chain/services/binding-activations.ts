import { Injectable } from '@nestjs/common';
import type { BindingRecord, ConnectionRecord } from '../domain/supply-chain.types.js';

export type BindingActivatedListener = (binding: BindingRecord) => Promise<void>;
export type ConnectionResumedListener = (connection: ConnectionRecord) => Promise<void>;

/**
 * Tells whoever registered (supply-chain-sync: the initial sync) that a binding became `active` — created active
 * (public, whitelist) or approved — inside the transaction that activated it, so what they record commits or rolls
 * back with the activation (docs/supply-chain.md, "Initial sync and reconcile").
 */
@Injectable()
export class BindingActivations {
  private readonly listeners: BindingActivatedListener[] = [];
  private readonly resumeListeners: ConnectionResumedListener[] = [];

  onActivated(listener: BindingActivatedListener): void {
    this.listeners.push(listener);
  }

  async activated(binding: BindingRecord): Promise<void> {
    for (const listener of this.listeners) {
      await listener(binding);
    }
  }

  /**
   * A paused connection was resumed, in that transaction: bindings activated while it was paused got no initial sync
   * then (nothing is queued for a connection that is not active), so they get it now.
   */
  onConnectionResumed(listener: ConnectionResumedListener): void {
    this.resumeListeners.push(listener);
  }

  async connectionResumed(connection: ConnectionRecord): Promise<void> {
    for (const listener of this.resumeListeners) {
      await listener(connection);
    }
  }
}
