import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { PipelinedReader } from './pipelined-reader.js';

/** The parts of `pg.Client` that pipelining uses (`pipeline` is read on every query; its queues are internal). */
interface PipelinedClient {
  pipeline: boolean;
  getTransactionStatus(): string | null;
  once(event: 'drain', listener: () => void): unknown;
  _activeQuery?: unknown;
  _queryQueue: unknown[];
  _sentQueryQueue: unknown[];
}

/** Items of calls made in one tick, served by one load. */
interface Coalescing {
  items: unknown[];
  result: Promise<unknown>;
}

/** The `pg` client a transaction's manager runs on (its query runner's connection, open inside the transaction). */
function connectionOf(manager: EntityManager): PipelinedClient | undefined {
  return (manager.queryRunner as unknown as { databaseConnection?: PipelinedClient } | undefined)
    ?.databaseConnection;
}

/** Resolves once `client` has no statement queued, sent or running. */
function settled(client: PipelinedClient): Promise<void> {
  if (!client._activeQuery && client._queryQueue.length === 0 && client._sentQueryQueue.length === 0) {
    return Promise.resolve();
  }
  return new Promise((resolve) => client.once('drain', () => resolve()));
}

type IsolationLevel = 'READ COMMITTED' | 'REPEATABLE READ' | 'SERIALIZABLE';

interface TransactionState {
  manager: EntityManager;
  afterCommit: Array<() => void>;
  /** Items collected per collector during the transaction (collectAfterCommit). */
  collected?: Map<object, unknown[]>;
  /** Values loaded once per transaction (memo). */
  memos?: Map<object, Map<string, Promise<unknown>>>;
  /** A transaction of several concurrent parts (runPipelined). */
  grouped?: boolean;
  /** Calls being collected for one statement (coalesce), per collector and key. */
  coalescing?: Map<object, Map<string, Coalescing>>;
}

/**
 * Resolves once the statements started so far have left for PostgreSQL: TypeORM sends a query a few promise
 * turns after it is called, and PreparingClient flushes a tick's writes on the next tick. A caller that starts a
 * statement and then has CPU work that does not need its answer awaits this first, so PostgreSQL runs the statement
 * while Node does that work.
 */
export function sent(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Carries the current transaction through the request's async context, so a service marks a unit of work
 * with `run()` and every repository it calls joins the same transaction through `manager`. Nested `run()`
 * calls join the outer transaction. Hooks registered with `afterCommit()` run only once the outermost
 * transaction has committed (the outbox dispatcher uses this to deliver events promptly).
 */
@Injectable()
export class TransactionHost implements OnApplicationShutdown {
  private readonly logger = new Logger(TransactionHost.name);
  private readonly storage = new AsyncLocalStorage<TransactionState>();

  private pipelinedReader?: PipelinedReader;

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
    const result =
      isolation === 'READ COMMITTED'
        ? await this.dataSource.transaction(body)
        : await this.dataSource.transaction(isolation, body);
    this.runAfterCommit(afterCommit);
    return result;
  }

  private runAfterCommit(hooks: ReadonlyArray<() => void>): void {
    for (const hook of hooks) {
      try {
        hook();
      } catch (error) {
        this.logger.error({ err: error }, 'after-commit hook failed');
      }
    }
  }

  /**
   * Like `run()`, for work made of several concurrent parts (a group of writes, WriteBatcher): the transaction's
   * connection pipelines its statements, so the statements the parts send in one tick leave in one socket write and
   * PostgreSQL answers them in order without waiting for the client between them. The parts share the transaction,
   * its after-commit hooks and its memos. Statements of the parts interleave, so parts must not read what another
   * part writes. Never nested: inside a transaction it refuses.
   */
  async runPipelined<T>(work: () => Promise<T>): Promise<T> {
    if (this.storage.getStore()) {
      throw new Error('runPipelined cannot join an open transaction');
    }
    const afterCommit: Array<() => void> = [];
    const result = await this.dataSource.transaction(async (manager) => {
      const client = connectionOf(manager) as PipelinedClient;
      client.pipeline = true;
      try {
        return await this.storage.run({ manager, afterCommit, grouped: true }, work);
      } finally {
        // COMMIT, ROLLBACK and the pool's next user talk to the connection one statement at a time again.
        await settled(client);
        client.pipeline = false;
      }
    });
    this.runAfterCommit(afterCommit);
    return result;
  }

  /**
   * A function that runs work inside the current transaction (or outside any, when none is open), from whatever
   * async context it is called: for work carried into another context, such as a request's own (WriteBatcher).
   */
  capture(): <T>(work: () => T) => T {
    const state = this.storage.getStore();
    return (work) => (state ? this.storage.run(state, work) : this.storage.exit(work));
  }

  /** Whether the current transaction failed (a statement errored: PostgreSQL will roll it back at COMMIT). */
  get failed(): boolean {
    const state = this.storage.getStore();
    return state ? connectionOf(state.manager)?.getTransactionStatus() === 'E' : false;
  }

  /**
   * Collects `item` under `collector` for the current transaction and calls `flush` once, after commit, with every
   * item collected there (in order); never if it rolls back. Outside a transaction: `flush([item])` now. Lets a
   * subscriber of a batch of events do one thing per transaction instead of one per event.
   */
  collectAfterCommit<T>(collector: object, item: T, flush: (items: T[]) => void): void {
    const state = this.storage.getStore();
    if (!state) {
      flush([item]);
      return;
    }
    state.collected ??= new Map();
    const items = state.collected.get(collector) as T[] | undefined;
    if (items) {
      items.push(item);
      return;
    }
    const first: T[] = [item];
    state.collected.set(collector, first);
    state.afterCommit.push(() => flush(first));
  }

  /**
   * What `load` gives for `key` under `collector`, loaded once per transaction and shared by later calls in it;
   * outside a transaction, loaded every time. For subscribers of a dispatched batch of events, which would
   * otherwise read the same document or setting once per event.
   */
  memo<T>(collector: object, key: string, load: () => Promise<T>): Promise<T> {
    const state = this.storage.getStore();
    if (!state) {
      return load();
    }
    state.memos ??= new Map();
    let memos = state.memos.get(collector);
    if (!memos) {
      memos = new Map();
      state.memos.set(collector, memos);
    }
    let value = memos.get(key) as Promise<T> | undefined;
    if (!value) {
      value = load();
      memos.set(key, value);
    }
    return value;
  }

  /** `memo` inside a transaction of several parts (runPipelined), which they share; elsewhere loaded every time. */
  groupMemo<T>(collector: object, key: string, load: () => Promise<T>): Promise<T> {
    return this.storage.getStore()?.grouped === true ? this.memo(collector, key, load) : load();
  }

  /**
   * In a transaction of several parts (runPipelined), the calls of one tick under `collector` and `key` are served by
   * one `load` of all their items, in the order they came (a part waits for the others' items one tick at most):
   * the parts of a group of writes read their rows with one statement, and lock them in one order. Every call gets
   * the result of the whole load. Elsewhere, `load(items)` at once.
   */
  coalesce<I, R>(
    collector: object,
    key: string,
    items: readonly I[],
    load: (items: I[]) => Promise<R>,
  ): Promise<R> {
    const state = this.storage.getStore();
    if (state?.grouped !== true) {
      return load([...items]);
    }
    state.coalescing ??= new Map();
    let byKey = state.coalescing.get(collector);
    if (!byKey) {
      byKey = new Map();
      state.coalescing.set(collector, byKey);
    }
    const open = byKey.get(key);
    if (open) {
      open.items.push(...items);
      return open.result as Promise<R>;
    }
    const collected: unknown[] = [...items];
    const calls = byKey;
    const result = new Promise<R>((resolve, reject) => {
      // After every part has run as far as it can without waiting (process.nextTick runs once the microtasks drain).
      process.nextTick(() => {
        calls.delete(key);
        load(collected as I[]).then(resolve, reject);
      });
    });
    byKey.set(key, { items: collected, result });
    return result;
  }

  /**
   * The rows of one short keyed read: in the current transaction when one is open, else on the pipelined connection
   * shared by concurrent requests (PipelinedReader; docs/performance.md, "Eighth pass"), which also skips TypeORM's
   * per-statement query runner (create, connect, broadcast events, release). The access check of every
   * authenticated document request is such a read. TypeORM's slow-query log does not see these reads.
   */
  async select<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    const state = this.storage.getStore();
    if (state) {
      return state.manager.query<T[]>(sql, params);
    }
    return this.reader().query<T>(sql, params);
  }

  /** The pipelined connection of `select` outside transactions, opened with the pool's settings on first use. */
  private reader(): PipelinedReader {
    if (!this.pipelinedReader) {
      const pool = (
        this.dataSource.driver as unknown as {
          master: { options: pg.ClientConfig & { Client?: unknown; max?: number } };
        }
      ).master;
      const { Client: _client, max: _max, ...connection } = pool.options;
      this.pipelinedReader = new PipelinedReader(connection);
    }
    return this.pipelinedReader;
  }

  /** Closed with the pool, once the HTTP server has let the in-flight requests finish. */
  async onApplicationShutdown(): Promise<void> {
    await this.pipelinedReader?.close();
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

  /**
   * Runs `work` inside the current transaction behind a savepoint: if it throws, what it wrote is rolled back to the
   * savepoint — and so are the after-commit hooks and collected items it registered, and the memos (they may hold
   * what it read or wrote) — and the error is rethrown; the transaction itself stays usable, so the caller may
   * commit what came before. Needs an open transaction (not a group of writes).
   */
  async savepoint<T>(work: () => Promise<T>): Promise<T> {
    const state = this.storage.getStore();
    if (!state || state.grouped) {
      throw new Error('savepoint needs an open transaction of its own');
    }
    const name = `sp_${randomUUID().replace(/-/g, '')}`;
    const hooks = state.afterCommit.length;
    const collected = new Map([...(state.collected ?? new Map<object, unknown[]>())].map(([collector, items]) => [collector, items.length]));
    await state.manager.query(`SAVEPOINT ${name}`);
    try {
      const result = await work();
      await state.manager.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      // A connection lost meanwhile fails the rollback too: the transaction is gone, the work's error says why.
      await state.manager.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {
        throw error;
      });
      state.afterCommit.length = hooks;
      for (const [collector, items] of state.collected ?? []) {
        const kept = collected.get(collector);
        if (kept === undefined) {
          state.collected?.delete(collector);
        } else {
          items.length = kept;
        }
      }
      state.memos?.clear();
      throw error;
    }
  }
}
