import { Injectable } from '@nestjs/common';
import type { MetadataResponseDto, MetadataWriteResponseDto, SettingsResponseDto, SettingsWriteResponseDto } from '../dtos/document.dto.js';
import { toMetadataDto, toSettingsDto, toWriteResult } from '../mappers/document.mapper.js';
import { DocumentRepository } from '../repositories/document.repository.js';
import { RowRepository } from '../repositories/row.repository.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { buildMetadataUpdate, buildSettingsUpdate, checkMetadataVersion, parseSettings } from './change-builders.js';
import { ChangeEngineService } from './change-engine.service.js';
import { ComputedMetadataService } from './computed/computed-metadata.service.js';
import { type DocumentContext, DocumentAccessService } from './document-access.service.js';
import { DraftReadService } from './draft-read.service.js';
import type { WriteParams } from './rows.service.js';

/** Metadata (field definitions) and settings: read, and changed through the change engine. */
@Injectable()
export class MetadataService {
  constructor(
    private readonly engine: ChangeEngineService,
    private readonly drafts: DraftReadService,
    private readonly documents: DocumentRepository,
    private readonly rows: RowRepository,
    private readonly computed: ComputedMetadataService,
    private readonly access: DocumentAccessService,
  ) {}

  async get(ctx: DocumentContext, requestId?: string): Promise<MetadataResponseDto> {
    const draft = await this.drafts.load(ctx.document, requestId);
    return toMetadataDto(draft.metadata, ctx.document.metadataVersion + (draft.folded?.metadata ? 1 : 0));
  }

  /**
   * PUT /metadata: the complete new definitions, diffed on merge into field-create/-update/-delete operations;
   * type changes convert stored values and report what could not be converted.
   */
  async put(ctx: DocumentContext, body: { fields?: unknown; properties?: unknown; version?: number }, params: WriteParams): Promise<MetadataWriteResponseDto> {
    const outcome = await this.engine.write(ctx, { ...params, title: 'Update metadata' }, async (scope) => {
      const rebase = body.version !== undefined && (await checkMetadataVersion(scope, body.version));
      const change = await buildMetadataUpdate(scope, body, async (fieldId) => (await this.rows.duplicateValues(scope.document.uuid, fieldId)).length > 0, '', rebase);
      if (change) {
        // Lookups of other documents reading a field deleted or retyped here (docs/formulas.md).
        await this.computed.checkMetadataChange(scope.document, (change.data as { fields: FieldDefinition[] }).fields);
      }
      return change ? [change] : [];
    });
    const document = (await this.documents.findByUuid(ctx.document.uuid)) ?? ctx.document;
    const view = await this.get({ ...ctx, document }, outcome.merge ? undefined : (outcome.request?.id ?? params.requestId));
    return { ...view, request: toWriteResult(outcome), conversions: outcome.merge?.conversions ?? [] };
  }

  /** The settings; with `requestId` the draft's (the request's settings change over the document's), as other reads. */
  async getSettings(ctx: DocumentContext, requestId?: string): Promise<SettingsResponseDto> {
    return toSettingsDto(requestId === undefined ? ctx.document.settings : await this.drafts.settings(ctx.document, requestId));
  }

  async putSettings(ctx: DocumentContext, body: unknown, params: WriteParams): Promise<SettingsWriteResponseDto> {
    const settings = parseSettings(body);
    await this.access.assertApproversMayView(ctx.document, settings);
    const outcome = await this.engine.write(ctx, { ...params, title: 'Update settings' }, async (scope) => {
      const change = buildSettingsUpdate(scope, settings);
      return change ? [change] : [];
    });
    const document = (await this.documents.findByUuid(ctx.document.uuid)) ?? ctx.document;
    // Not merged (a request left open, or awaiting approval): the answer is the draft's, as for every write.
    const draftOf = outcome.merge ? undefined : outcome.request?.id;
    const shown = draftOf ? await this.drafts.settings(document, draftOf) : document.settings;
    return { ...toSettingsDto(shown), request: toWriteResult(outcome) };
  }
}
