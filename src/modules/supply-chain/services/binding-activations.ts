import { Injectable } from '@nestjs/common';
import type { BindingRecord } from '../domain/supply-chain.types.js';

export type BindingActivatedListener = (binding: BindingRecord) => Promise<void>;

/**
 * Tells whoever registered (supply-chain-sync: the initial sync) that a binding became `active` — created active
 * (public, whitelist) or approved — inside the transaction that activated it, so what they record commits or rolls
 * back with the activation (docs/supply-chain.md, "Initial sync and reconcile").
 */
@Injectable()
export class BindingActivations {
  private readonly listeners: BindingActivatedListener[] = [];

  onActivated(listener: BindingActivatedListener): void {
    this.listeners.push(listener);
  }

  async activated(binding: BindingRecord): Promise<void> {
    for (const listener of this.listeners) {
      await listener(binding);
    }
  }
}
