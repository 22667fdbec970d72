import { AsyncResource } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';

/**
 * Thrown by a member of a group that cannot go on inside the group: it touches a row another member holds
 * (`claimRows`), or its document needs writes one at a time. It has written nothing; it runs again after the group,
 * in the next group or (`alone`) in a transaction of its own.
 */
export class GroupExit extends Error {
  constructor(readonly alone: boolean) {
    super(
      alone
        ? 'the write must run in a transaction of its own'
        : 'another write of the group holds one of its rows',
    );
  }
}

/** What a write running inside a group tells the group. */
export interface GroupMember {
  /** Claims rows (ids, present or not) for this write; throws GroupExit when another write of the group holds one. */
  claimRows(ids: Iterable<string>): void;
  /** From here on the write changes the database: if it fails now, the whole group is rolled back. */
  startWriting(): void;
}

/** A write as the batcher runs it: inside the current transaction, in a group (`member`) or alone (null). */
export type GroupedWrite<T> = (member: GroupMember | null) => Promise<T>;

interface Pending {
  run: GroupedWrite<unknown>;
  /** The submitting request's async context (its logger): a write runs in it, whichever request drives the lane. */
  context: AsyncResource;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Lane {
  running: number;
  waiting: Pending[];
}

/** Transactions of one document in flight at once from this instance; writes arriving meanwhile form groups. */
const LANE_CONCURRENCY = 2;
/** The most writes one group commits together. */
const MAX_GROUP = 32;

class GroupAborted extends Error {}

/**
 * Group commit for writes of one document (docs/performance.md, "Eighth pass"). A write starts at once in a
 * transaction of its own while fewer than LANE_CONCURRENCY transactions of its document run; otherwise it waits, and
 * the writes that waited run together in one transaction (`TransactionHost.runPipelined`): concurrently, their
 * statements pipelined, one BEGIN and one COMMIT for all, each write answered on its own once the group committed.
 *
 * A group is all or nothing towards the database but not towards its callers:
 * - a write failing before it changed anything (validation, a lock held elsewhere) fails alone, the others commit;
 * - a write touching a row another write of the group holds leaves the group unharmed and runs in the next one,
 *   after the holder committed: rows never see two writes of one transaction, so each write reads, validates and
 *   records the row as the previous write committed it, exactly as alone;
 * - a write failing while it changed the database, a failed statement or a failed COMMIT roll the group back, and
 *   every write of it runs again in a transaction of its own (where a bad write gets its own error).
 */
@Injectable()
export class WriteBatcher {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly tx: TransactionHost) {}

  /** Runs `run` for the lane `key` (a document), alone or in a group; settles with the write's own outcome. */
  submit<T>(key: string, run: GroupedWrite<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = {
        run: run as GroupedWrite<unknown>,
        context: new AsyncResource('quire.write'),
        resolve: resolve as (value: unknown) => void,
        reject,
      };
      let lane = this.lanes.get(key);
      if (!lane) {
        lane = { running: 0, waiting: [] };
        this.lanes.set(key, lane);
      }
      if (lane.running < LANE_CONCURRENCY) {
        void this.drive(key, lane, [pending]);
      } else {
        lane.waiting.push(pending);
      }
    });
  }

  /** Runs `first`, then whatever waits, until the lane is empty; never rejects. */
  private async drive(key: string, lane: Lane, first: Pending[]): Promise<void> {
    lane.running += 1;
    try {
      let next = first;
      while (next.length > 0) {
        const deferred = next.length === 1 ? await this.alone(next) : await this.together(next);
        lane.waiting.unshift(...deferred);
        next = lane.waiting.splice(0, MAX_GROUP);
      }
    } finally {
      lane.running -= 1;
      if (lane.running === 0 && lane.waiting.length === 0) {
        this.lanes.delete(key);
      }
    }
  }

  private async alone(writes: Pending[]): Promise<Pending[]> {
    await Promise.all(
      writes.map((write) => started(write, () => write.run(null)).then(write.resolve, write.reject)),
    );
    return [];
  }

  /** Runs `writes` in one transaction; returns those that must run again in a later group. */
  private async together(writes: Pending[]): Promise<Pending[]> {
    const claims = new Map<string, number>();
    const writing = writes.map(() => false);
    let outcomes: PromiseSettledResult<unknown>[] = [];
    try {
      await this.tx.runPipelined(async () => {
        const inGroup = this.tx.capture();
        outcomes = await Promise.allSettled(
          writes.map((write, index) => {
            const member: GroupMember = {
              claimRows: (ids) => {
                const wanted = [...ids];
                if (wanted.some((id) => (claims.get(id) ?? index) !== index)) {
                  throw new GroupExit(false);
                }
                wanted.forEach((id) => claims.set(id, index));
              },
              startWriting: () => {
                writing[index] = true;
              },
            };
            return started(write, () => inGroup(() => write.run(member)));
          }),
        );
        const broken = outcomes.some((outcome, index) => outcome.status === 'rejected' && writing[index]);
        if (broken || this.tx.failed) {
          throw new GroupAborted();
        }
      });
    } catch {
      // Rolled back: nothing of the group stands. Each write runs again on its own.
      return this.alone(writes);
    }
    const deferred: Pending[] = [];
    const alone: Pending[] = [];
    outcomes.forEach((outcome, index) => {
      const write = writes[index] as Pending;
      if (outcome.status === 'fulfilled') {
        write.resolve(outcome.value);
      } else if (outcome.reason instanceof GroupExit) {
        (outcome.reason.alone ? alone : deferred).push(write);
      } else {
        write.reject(outcome.reason);
      }
    });
    await this.alone(alone);
    return deferred;
  }
}

/** Runs `work` in the write's own async context; a synchronous throw becomes a rejection, never a stuck lane. */
function started<T>(write: Pending, work: () => Promise<T>): Promise<T> {
  return write.context.runInAsyncScope(() => {
    try {
      return work();
    } catch (error) {
      return Promise.reject(error);
    }
  });
}
