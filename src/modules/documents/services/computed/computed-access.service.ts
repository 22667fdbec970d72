import { Injectable } from '@nestjs/common';
import { computedInputs } from '../../fields/computed-definitions.js';
import type { FieldDefinition } from '../../fields/field.types.js';
import { ComputedValuesRepository } from '../../repositories/computed-values.repository.js';
import { DocumentRepository } from '../../repositories/document.repository.js';
import { type DocumentContext, DocumentAccessService } from '../document-access.service.js';

/**
 * Lookups and rollups may read rows of other documents of the organization. A reader who cannot read one of those
 * documents does not see such a field (nor a formula reading it): it is left out of the fields a read uses, so its
 * values are not returned and filters, sorts and groups on it answer "unknown field" (docs/formulas.md).
 */
@Injectable()
export class ComputedAccessService {
  constructor(
    private readonly values: ComputedValuesRepository,
    private readonly documents: DocumentRepository,
    private readonly access: DocumentAccessService,
  ) {}

  async visibleFields(ctx: DocumentContext, fields: FieldDefinition[]): Promise<FieldDefinition[]> {
    const linked = fields.filter((field) => field.type === 'lookup' || field.type === 'rollup');
    if (linked.length === 0) {
      return fields;
    }
    const relationIds = [
      ...new Set(linked.map((field) => (field.lookup ?? field.rollup)?.relationFieldId ?? '')),
    ];
    const sources = await this.values.sources(ctx.document.uuid, relationIds);
    const unreadable = new Set<string>();
    const verdicts = new Map<string, boolean>();
    for (const source of sources.filter((item) => item.targetDocumentUuid !== ctx.document.uuid)) {
      let readable = verdicts.get(source.targetDocumentUuid);
      if (readable === undefined) {
        readable = await this.canRead(ctx, source.targetDocumentUuid);
        verdicts.set(source.targetDocumentUuid, readable);
      }
      if (!readable) {
        unreadable.add(source.relationFieldId);
      }
    }
    if (unreadable.size === 0) {
      return fields;
    }
    const hidden = new Set(
      linked
        .filter((field) => unreadable.has((field.lookup ?? field.rollup)?.relationFieldId ?? ''))
        .map((field) => field.id),
    );
    const ids = new Set(fields.map((field) => field.id));
    for (let grew = true; grew;) {
      grew = false;
      for (const field of fields) {
        if (
          !hidden.has(field.id) &&
          field.type === 'formula' &&
          computedInputs(field, ids).some((id) => hidden.has(id))
        ) {
          hidden.add(field.id);
          grew = true;
        }
      }
    }
    return fields.filter((field) => !hidden.has(field.id));
  }

  private async canRead(ctx: DocumentContext, documentUuid: string): Promise<boolean> {
    const target = await this.documents.findByUuid(documentUuid);
    if (!target || target.organizationId !== ctx.document.organizationId) {
      return false;
    }
    try {
      const rights = target.workspaceId
        ? await this.access.accessTo(ctx.principal, target.workspaceId)
        : await this.access.organizationRights(ctx.principal, target.organizationId);
      if (!rights.canRead) {
        return false;
      }
      const access = { ...rights, workspaceId: target.workspaceId, archived: false };
      // The target's own `permissions.view` narrows as for a direct read (docs/settings.md).
      await this.access.narrowBySettings(
        {
          document: target,
          access,
          readOnly: false,
          principal: ctx.principal,
          viaWorkspaceId: target.workspaceId,
        },
        'read',
      );
      return true;
    } catch {
      return false;
    }
  }
}
