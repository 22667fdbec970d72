import { Injectable } from '@nestjs/common';
import type { EventDocument } from '../../../events/domain-event.js';
import { computedInputs } from '../../fields/computed-definitions.js';
import type { FieldDefinition } from '../../fields/field.types.js';
import type { DocumentRecord } from '../../domain/document.records.js';
import { ComputedValuesRepository } from '../../repositories/computed-values.repository.js';
import { DocumentRepository } from '../../repositories/document.repository.js';
import { type DocumentContext, DocumentAccessService } from '../document-access.service.js';
import { ValueMask } from './value-mask.js';

export { ValueMask };

/** A document a relation field's lookups read from (computed_field_sources, or a draft's relation values). */
export interface LinkedSource {
  relationFieldId: string;
  targetDocumentUuid: string;
}

export interface MaskOptions {
  /** The fields the values belong to; default: the document's. */
  fields?: readonly FieldDefinition[];
  /** Documents a draft's relation values link to, which computed_field_sources does not know yet. */
  linked?: readonly LinkedSource[];
  /**
   * The values were recorded in the past (revisions, diffs, exports, events): fields the document had then count
   * with the definitions its history records, and a deleted source document is judged as it stood when deleted.
   */
  history?: boolean;
}

/** Documents a lookup chain is followed through at most (as far as a change ripples, ComputedFieldsService). */
const MAX_DEPTH = 8;

function linkOf(field: FieldDefinition): { relationFieldId: string; targetFieldId: string } | undefined {
  return field.type === 'lookup' ? field.lookup : field.type === 'rollup' ? field.rollup : undefined;
}

/**
 * What one reader may read of the documents lookups follow, worked out once per mask and shared along the chain
 * (keyed by `history|document`: a deleted document counts differently for recorded values).
 */
interface Walk {
  userId: string;
  history: boolean;
  readable: Map<string, Promise<DocumentRecord | null | undefined>>;
  hidden: Map<string, Promise<ReadonlySet<string>>>;
}

/**
 * Lookups and rollups may read rows of other documents of the organization. A reader who cannot read one of those
 * documents (workspace role, then its `permissions.view`) does not see such a field, nor what is computed from it:
 * formulas reading it, lookups of the same document over it, and lookups of other documents over those (the chain
 * is followed). `maskFor` works out these fields for one reader (a ValueMask); every way row values leave the
 * service applies it: reads leave the fields out of the fields they use (so filters, sorts and groups on them
 * answer "unknown field"), write answers, revisions, diffs, exports and events (for the realtime subscriber, the
 * webhook's creator) leave their values out (docs/formulas.md, "Access"). A deleted source document has no rows to
 * read: it hides nothing from current rows, whose lookups over it are empty.
 */
@Injectable()
export class ComputedAccessService {
  constructor(
    private readonly values: ComputedValuesRepository,
    private readonly documents: DocumentRepository,
    private readonly access: DocumentAccessService,
  ) {}

  /** The fields of `document` whose values `userId` may not see. */
  async maskFor(document: DocumentRecord, userId: string, options: MaskOptions = {}): Promise<ValueMask> {
    const walk: Walk = { userId, history: options.history === true, readable: new Map(), hidden: new Map() };
    const hidden = await this.hiddenIn(
      walk,
      document,
      options.fields ?? document.metadata.fields,
      options.linked ?? [],
      0,
      new Set(),
    );
    return hidden.size === 0 ? ValueMask.NONE : new ValueMask(hidden);
  }

  /** The caller's view of the fields a read uses: without those whose values they may not see. */
  async visibleFields(
    ctx: DocumentContext,
    fields: FieldDefinition[],
    linked: readonly LinkedSource[] = [],
  ): Promise<FieldDefinition[]> {
    return (await this.maskFor(ctx.document, ctx.principal.userId, { fields, linked })).fields(fields);
  }

  /** The caller's mask for values of the document's history (revisions, diffs, exports, the event history). */
  historyMask(ctx: DocumentContext, fields?: readonly FieldDefinition[]): Promise<ValueMask> {
    return this.maskFor(ctx.document, ctx.principal.userId, { history: true, fields });
  }

  /**
   * The mask for events of a document delivered to `userId` (a realtime subscriber, a webhook's creator), given by
   * its internal id (also once deleted: a stream may still be sent its last events) or by the coordinates an event
   * carries (a live document; webhooks deliver nothing of a deleted one).
   */
  async eventMask(document: string | EventDocument, userId: string): Promise<ValueMask> {
    const found =
      typeof document === 'string'
        ? await this.documents.findIncludingDeleted(document)
        : await this.access.findEventDocument(document);
    return found ? this.maskFor(found, userId, { history: true }) : ValueMask.NONE;
  }

  private hiddenIn(
    walk: Walk,
    document: DocumentRecord,
    fields: readonly FieldDefinition[],
    linked: readonly LinkedSource[],
    depth: number,
    path: ReadonlySet<string>,
  ): Promise<ReadonlySet<string>> {
    const shared = fields === document.metadata.fields && linked.length === 0;
    const key = `${walk.history}|${document.uuid}`;
    const memo = shared ? walk.hidden.get(key) : undefined;
    if (memo) {
      return memo;
    }
    const computed = this.computeHidden(walk, document, fields, linked, depth, path);
    if (shared) {
      walk.hidden.set(key, computed);
    }
    return computed;
  }

  private async computeHidden(
    walk: Walk,
    document: DocumentRecord,
    fields: readonly FieldDefinition[],
    linked: readonly LinkedSource[],
    depth: number,
    path: ReadonlySet<string>,
  ): Promise<ReadonlySet<string>> {
    if (!walk.history && !fields.some((field) => linkOf(field) !== undefined)) {
      return new Set();
    }
    const sources = [...(await this.values.allSources(document.uuid)), ...linked];
    const foreign = sources.filter((source) => source.targetDocumentUuid !== document.uuid);
    if (foreign.length === 0) {
      return new Set();
    }
    const selfLinked = new Set(
      sources
        .filter((source) => source.targetDocumentUuid === document.uuid)
        .map((source) => source.relationFieldId),
    );
    // Per relation field: unreadable (every lookup over it hidden), or the fields its readable targets hide.
    const unreadable = new Set<string>();
    const hiddenTargets = new Map<string, Set<string>>();
    const within = new Set([...path, document.uuid]);
    for (const source of foreign) {
      if (unreadable.has(source.relationFieldId)) {
        continue;
      }
      const target = await this.readable(walk, document, source.targetDocumentUuid);
      if (target === null) {
        unreadable.add(source.relationFieldId);
        continue;
      }
      if (target === undefined || within.has(target.uuid) || depth >= MAX_DEPTH) {
        continue;
      }
      const targetHidden = await this.hiddenIn(
        { ...walk, history: false },
        target,
        target.metadata.fields,
        [],
        depth + 1,
        within,
      );
      if (targetHidden.size > 0) {
        const set = hiddenTargets.get(source.relationFieldId) ?? new Set<string>();
        targetHidden.forEach((id) => set.add(id));
        hiddenTargets.set(source.relationFieldId, set);
      }
    }
    if (unreadable.size === 0 && hiddenTargets.size === 0) {
      return new Set();
    }
    const definitions = walk.history
      ? [...fields, ...(await this.values.recordedComputedFields(document.uuid))]
      : fields;
    const ids = new Set(definitions.map((field) => field.id));
    const hidden = new Set<string>();
    for (const field of definitions) {
      const link = linkOf(field);
      if (
        link &&
        (unreadable.has(link.relationFieldId) ||
          hiddenTargets.get(link.relationFieldId)?.has(link.targetFieldId) === true)
      ) {
        hidden.add(field.id);
      }
    }
    for (let grew = hidden.size > 0; grew;) {
      grew = false;
      for (const field of definitions) {
        if (hidden.has(field.id)) {
          continue;
        }
        const link = linkOf(field);
        const reads =
          field.type === 'formula'
            ? computedInputs(field, ids).some((id) => hidden.has(id))
            : link !== undefined && selfLinked.has(link.relationFieldId) && hidden.has(link.targetFieldId);
        if (reads) {
          hidden.add(field.id);
          grew = true;
        }
      }
    }
    return hidden;
  }

  /**
   * The source document when the reader may read it, null when not, undefined when it has no rows to read (deleted,
   * for current rows). A document of another organization is never read.
   */
  private readable(
    walk: Walk,
    reader: DocumentRecord,
    documentUuid: string,
  ): Promise<DocumentRecord | null | undefined> {
    const key = `${walk.history}|${documentUuid}`;
    let verdict = walk.readable.get(key);
    if (!verdict) {
      verdict = this.judge(walk, reader, documentUuid);
      walk.readable.set(key, verdict);
    }
    return verdict;
  }

  private async judge(
    walk: Walk,
    reader: DocumentRecord,
    documentUuid: string,
  ): Promise<DocumentRecord | null | undefined> {
    let target = await this.documents.findByUuid(documentUuid);
    if (!target) {
      if (!walk.history) {
        return undefined;
      }
      // Values recorded while it existed: judged as it stood when deleted.
      target = await this.documents.findIncludingDeleted(documentUuid);
      if (!target) {
        return null;
      }
    }
    if (target.organizationId !== reader.organizationId) {
      return null;
    }
    return (await this.access.mayView(target, walk.userId)) ? target : null;
  }
}
