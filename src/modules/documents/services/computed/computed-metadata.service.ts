import { Injectable } from '@nestjs/common';
import { AppException, type ErrorDetail } from '../../../../common/errors/app.exception.js';
import { computedInputs, formulaTypeOfField } from '../../fields/computed-definitions.js';
import type { FieldDefinition } from '../../fields/field.types.js';
import type { DocumentRecord } from '../../domain/document.records.js';
import { ComputedValuesRepository } from '../../repositories/computed-values.repository.js';
import { DocumentRepository } from '../../repositories/document.repository.js';

const COMPUTED = new Set(['formula', 'lookup', 'rollup']);

/**
 * The rules of computed fields that need the database, run when a metadata change is written (`PUT /metadata`, or a
 * `metadata-update` change of `POST /requests`; docs/formulas.md): lookups of other documents reading a field deleted
 * or retyped here, and cycles of lookups through other documents. The rules a metadata alone decides are
 * `checkComputedDefinitions` / `checkDependents`. A merge asks for the readers again (`readersOfRemoved`).
 */
@Injectable()
export class ComputedMetadataService {
  constructor(
    private readonly values: ComputedValuesRepository,
    private readonly documents: DocumentRepository,
  ) {}

  /** The database's rules for a metadata change about to be recorded: readers in other documents, then cycles. */
  async checkMetadataChange(document: DocumentRecord, fields: readonly FieldDefinition[]): Promise<void> {
    await this.checkReaders(document, document.metadata.fields, fields);
    await this.checkCycles(document, fields);
  }

  /**
   * Refuses deleting or retyping a field that lookups or rollups of other documents read (VALIDATION_ERROR naming
   * them as `docType/docId:fieldId`); the same-document rule is `checkDependents`. Known readers are those whose
   * lookups have linked here (computed_field_sources).
   */
  async checkReaders(
    document: DocumentRecord,
    before: readonly FieldDefinition[],
    after: readonly FieldDefinition[],
  ): Promise<void> {
    const errors: ErrorDetail[] = (await this.readersOfRemoved(document, before, after)).map((reader) => ({
      field: 'fields',
      fieldId: reader.fieldId,
      dependents: reader.dependents,
      reason: reader.reason,
    }));
    if (errors.length > 0) {
      throw AppException.validation(errors);
    }
  }

  /**
   * The fields deleted or retyped from `before` to `after` that lookups or rollups of other documents read (named
   * `docType/docId:fieldId`), or this document's own through links into its rows (named by their id), each with a
   * sentence saying so. Also asked when a request merges: a
   * lookup may have started reading the field after the change was recorded.
   */
  async readersOfRemoved(
    document: DocumentRecord,
    before: readonly FieldDefinition[],
    after: readonly FieldDefinition[],
  ): Promise<{ fieldId: string; dependents: string[]; reason: string }[]> {
    const next = new Map(after.map((field) => [field.id, field]));
    const gone = before.filter((field) => {
      const now = next.get(field.id);
      return now === undefined || formulaTypeOfField(now) !== formulaTypeOfField(field);
    });
    if (gone.length === 0) {
      return [];
    }
    // This document's own lookups count too when their links reach its rows (a relation into its own document):
    // the metadata alone cannot tell, the target id naming a field here or in the document a link reaches.
    const readers = await this.values.readers(document.organizationId, document.uuid);
    const byDocument = new Map<string, Set<string>>();
    readers.forEach((reader) =>
      byDocument.set(
        reader.documentUuid,
        (byDocument.get(reader.documentUuid) ?? new Set()).add(reader.relationFieldId),
      ),
    );
    const dependents = new Map<string, string[]>();
    for (const [documentUuid, relationFieldIds] of byDocument) {
      const own = documentUuid === document.uuid;
      const reader = own ? document : await this.documents.findByUuid(documentUuid);
      // Its own lookups as the change leaves them: one removed in the same write reads nothing.
      for (const field of (own ? after : reader?.metadata.fields) ?? []) {
        const ref =
          field.type === 'lookup' ? field.lookup : field.type === 'rollup' ? field.rollup : undefined;
        if (
          reader &&
          ref &&
          relationFieldIds.has(ref.relationFieldId) &&
          gone.some((old) => old.id === ref.targetFieldId)
        ) {
          dependents.set(ref.targetFieldId, [
            ...(dependents.get(ref.targetFieldId) ?? []),
            own ? field.id : `${reader.docType}/${reader.docId}:${field.id}`,
          ]);
        }
      }
    }
    return [...dependents].map(([fieldId, names]) => ({
      fieldId,
      dependents: names,
      reason: names.every((name) => name.includes(':'))
        ? `field ${fieldId} is ${next.has(fieldId) ? 'retyped' : 'deleted'} but ${names.join(', ')} in other documents read it; change or remove them first`
        : `field ${fieldId} is ${next.has(fieldId) ? 'retyped' : 'deleted'} but ${names.join(', ')} read it through links into this document${names.some((name) => name.includes(':')) ? ' or from other documents' : ''}; change or remove them first`,
    }));
  }

  /**
   * Refuses a metadata change whose formulas, lookups and rollups would form a cycle through other documents
   * (`orders.bk` rolls up `products.back`, which looks up `orders.bk`). Cycles inside one document are refused by
   * `checkComputedDefinitions`; here the links are those lookups have followed (computed_field_sources).
   */
  async checkCycles(document: DocumentRecord, after: readonly FieldDefinition[]): Promise<void> {
    const metadata = new Map<string, { record: DocumentRecord; fields: readonly FieldDefinition[] } | null>([
      [document.uuid, { record: document, fields: after }],
    ]);
    const load = async (
      uuid: string,
    ): Promise<{ record: DocumentRecord; fields: readonly FieldDefinition[] } | null> => {
      if (!metadata.has(uuid)) {
        const record = await this.documents.findByUuid(uuid);
        metadata.set(uuid, record ? { record, fields: record.metadata.fields } : null);
      }
      return metadata.get(uuid) ?? null;
    };
    const sources = new Map<string, { relationFieldId: string; targetDocumentUuid: string }[]>();
    const dependencies = async (uuid: string, fieldId: string): Promise<string[]> => {
      const doc = await load(uuid);
      const field = doc?.fields.find((item) => item.id === fieldId);
      if (!doc || !field || !COMPUTED.has(field.type)) {
        return [];
      }
      const ids = new Set(doc.fields.map((item) => item.id));
      const local = computedInputs(field, ids).map((id) => `${uuid}|${id}`);
      const ref = field.type === 'lookup' ? field.lookup : field.type === 'rollup' ? field.rollup : undefined;
      if (!ref) {
        return local;
      }
      if (!sources.has(uuid)) {
        const relationIds = doc.fields.filter((item) => item.type === 'relation').map((item) => item.id);
        sources.set(uuid, await this.values.sources(uuid, relationIds));
      }
      const remote = (sources.get(uuid) ?? [])
        .filter(
          (source) => source.relationFieldId === ref.relationFieldId && source.targetDocumentUuid !== uuid,
        )
        .map((source) => `${source.targetDocumentUuid}|${ref.targetFieldId}`);
      return [...local, ...remote];
    };
    const name = async (node: string): Promise<string> => {
      const [uuid, fieldId] = node.split('|');
      const doc = await load(uuid);
      return doc ? `${doc.record.docType}/${doc.record.docId}:${fieldId}` : node;
    };
    const done = new Set<string>();
    let budget = 5000;
    const visit = async (node: string, stack: string[]): Promise<string[] | null> => {
      if (stack.includes(node)) {
        return [...stack.slice(stack.indexOf(node)), node];
      }
      if (done.has(node) || (budget -= 1) < 0) {
        return null;
      }
      const [uuid, fieldId] = node.split('|');
      for (const next of await dependencies(uuid, fieldId)) {
        const cycle = await visit(next, [...stack, node]);
        if (cycle) {
          return cycle;
        }
      }
      done.add(node);
      return null;
    };
    for (const [index, field] of after.entries()) {
      if (!COMPUTED.has(field.type)) {
        continue;
      }
      const cycle = await visit(`${document.uuid}|${field.id}`, []);
      if (cycle && cycle.some((node) => !node.startsWith(`${document.uuid}|`))) {
        const names = await Promise.all(cycle.map(name));
        throw AppException.validation([
          {
            field: `fields[${index}]`,
            fieldId: field.id,
            position: 0,
            reason: `circular reference through other documents: ${names.join(' → ')}`,
          },
        ]);
      }
    }
  }
}
