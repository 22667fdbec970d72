import { Injectable } from '@nestjs/common';
import type { DocumentRecord, RequestRecord, RevisionRecord } from '../domain/document.records.js';

/** A merged explicit request (one opened by `POST /requests`, a revert, …), with the revision it produced. */
export interface RequestMerged {
  document: DocumentRecord;
  request: RequestRecord;
  revision: RevisionRecord;
  mergedBy: string;
}

/** A request event another module follows: changes appended to it, or it was closed. */
export interface RequestTouched {
  document: DocumentRecord;
  request: RequestRecord;
  userId: string;
}

/**
 * Hooks run inside the transaction of the change (what they write and record in the outbox commits or rolls back
 * with it; a throwing hook fails the change).
 */
export type RequestHook<T> = (event: T) => Promise<void>;

/**
 * Decides whether a request of a document whose workflow requires approval may merge; throws to refuse
 * (the approvals module: APPROVAL_REQUIRED unless an approved instance exists).
 */
export type MergeGate = (document: DocumentRecord, request: RequestRecord, userId: string) => Promise<void>;

/**
 * Modules that attach state to explicit requests (revert markers, approval instances) follow them here without the
 * documents module depending on them. Implicit requests merged at once (the hot path) are not reported: nothing can
 * be attached to them before they merge.
 */
@Injectable()
export class RequestHooks {
  private readonly merged: RequestHook<RequestMerged>[] = [];
  private readonly appended: RequestHook<RequestTouched>[] = [];
  private readonly closed: RequestHook<RequestTouched>[] = [];
  private gate?: MergeGate;

  onMerged(hook: RequestHook<RequestMerged>): void {
    this.merged.push(hook);
  }

  onAppended(hook: RequestHook<RequestTouched>): void {
    this.appended.push(hook);
  }

  onClosed(hook: RequestHook<RequestTouched>): void {
    this.closed.push(hook);
  }

  useMergeGate(gate: MergeGate): void {
    this.gate = gate;
  }

  get hasMergeGate(): boolean {
    return this.gate !== undefined;
  }

  async notifyMerged(event: RequestMerged): Promise<void> {
    for (const hook of this.merged) {
      await hook(event);
    }
  }

  async notifyAppended(event: RequestTouched): Promise<void> {
    for (const hook of this.appended) {
      await hook(event);
    }
  }

  async notifyClosed(event: RequestTouched): Promise<void> {
    for (const hook of this.closed) {
      await hook(event);
    }
  }

  async checkMerge(document: DocumentRecord, request: RequestRecord, userId: string): Promise<void> {
    await this.gate?.(document, request, userId);
  }
}
