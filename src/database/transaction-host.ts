import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

type IsolationLevel = 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

interface TransactionState {
  manager: EntityManager;
  afterCommit: Array<() => void>;
}

/**
 * Carries the current transaction through the request's async context, so a service marks a unit of work
 * with `run()` and every repository it calls joins the same transaction through `manager`. Nested `run()`
 * calls join the outer transaction. Hooks registered with `afterCommit()` run only once the outermost
 * transaction has committed (the outbox dispatcher uses this to deliver events promptly).
 */
@Injectable()
export class TransactionHost {
  private readonly logger = new Logger(TransactionHost.name);
  private readonly storage = new AsyncLocalStorage<TransactionState>();

  constructor(private readonly dataSource: DataSource) {}

  /** The manager of the current transaction, or the pool's when none is open. */
  get manager(): EntityManager {
    return this.storage.getStore()?.manager ?? this.dataSource.manager;
  }

  get inTransaction(): boolean {
    return this.storage.getStore() !== undefined;
  }

  async run<T>(work: () => Promise<T>, isolation: IsolationLevel = 'READ COMMITTED'): Promise<T> {
    if (this.storage.getStore()) {
      return work();
    }
    const afterCommit: Array<() => void> = [];
    const body = (manager: EntityManager): Promise<T> => this.storage.run({ manager, afterCommit }, work);
    // READ COMMITTED is PostgreSQL's default: naming it would cost one more round trip per transaction.
    const result = isolation === 'READ COMMITTED' ? await this.dataSource.transaction(body) : await this.dataSource.transaction(isolation, body);
    for (const hook of afterCommit) {
      try {
        hook();
      } catch (error) {
        this.logger.error({ err: error }, 'after-commit hook failed');
      }
    }
    return result;
  }

  /** Runs `hook` after the current transaction commits; never if it rolls back. Outside a transaction: now. */
  afterCommit(hook: () => void): void {
    const state = this.storage.getStore();
    if (state) {
      state.afterCommit.push(hook);
    } else {
      hook();
    }
  }
}
