import { Injectable, type OnModuleInit } from '@nestjs/common';
import { BindingActivations } from '../../supply-chain/services/binding-activations.js';
import { PropagationJobRepository } from '../repositories/propagation-job.repository.js';
import { ReconcileScheduler } from '../services/reconcile-scheduler.service.js';
import { SupplyChainPort } from '../services/supply-chain.port.js';

/**
 * Spec 3: a binding "becomes active and begins syncing". When it becomes active (created active, or approved) it
 * gets one initial-sync job in the ledger, in the activating transaction: at the catalog's newest revision, a
 * reconcile that applies every catalog row as a `row_created` through the same pipeline (share scope, receiver
 * filter, mapping, accept mode) and withdraws the order-book rows an earlier binding of the catalog propagated that
 * this one does not bring (docs/supply-chain.md, "Initial sync and reconcile"). The ledger's unique (binding,
 * revision) makes it once; the worker runs it after commit.
 */
@Injectable()
export class BindingActivatedListener implements OnModuleInit {
  constructor(
    private readonly activations: BindingActivations,
    private readonly reconciles: ReconcileScheduler,
    private readonly port: SupplyChainPort,
    private readonly jobs: PropagationJobRepository,
  ) {}

  onModuleInit(): void {
    this.activations.onActivated(async (binding) => {
      await this.reconciles.schedule(binding, { kind: 'initial_sync' });
    });
    // A binding created active (or approved) while its connection was paused got no job then: it gets its initial
    // sync when the connection resumes. Bindings that already have jobs keep the rule that changes made while the
    // connection was paused are not replayed.
    this.activations.onConnectionResumed(async (connection) => {
      const bindings = await this.port.activeBindings(connection.id);
      const neverSynced = await this.jobs.withoutJobs(bindings.map((binding) => binding.id));
      for (const binding of bindings.filter((item) => neverSynced.has(item.id))) {
        await this.reconciles.schedule(binding, { kind: 'initial_sync' });
      }
    });
  }
}
