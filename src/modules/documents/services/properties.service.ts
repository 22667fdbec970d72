import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import type { RowValuesInput } from '../fields/field-type.registry.js';
import { applyPropertiesEffect } from '../domain/change-fold.js';
import { validationDetailsOf } from '../fields/field-value.utils.js';
import type { DocumentPropertiesDto, PropertiesWriteResponseDto } from '../dtos/properties.dto.js';
import type { PropertyHistoryEntryDto } from '../dtos/revision.dto.js';
import { toOperationDto, toPropertiesDto, toWriteResult } from '../mappers/document.mapper.js';
import { DocumentRepository } from '../repositories/document.repository.js';
import { PropertiesRepository } from '../repositories/properties.repository.js';
import { RevisionRepository } from '../repositories/revision.repository.js';
import { buildPropertiesDelete, buildPropertiesWrite, type PropertiesWriteMode } from './change-builders.js';
import { ChangeEngineService, type WriteOutcome } from './change-engine.service.js';
import { ComputedAccessService } from './computed/computed-access.service.js';
import { ComputedReadService } from './computed/computed-read.service.js';
import type { DocumentContext } from './document-access.service.js';
import { DraftReadService } from './draft-read.service.js';
import { RelationMergeService } from './merge/relation-merge.service.js';
import type { WriteParams } from './rows.service.js';

/** Document properties: values of `Metadata.properties`, written through the change engine like rows. */
@Injectable()
export class PropertiesService {
  constructor(
    private readonly engine: ChangeEngineService,
    private readonly drafts: DraftReadService,
    private readonly properties: PropertiesRepository,
    private readonly documents: DocumentRepository,
    private readonly revisions: RevisionRepository,
    private readonly computed: ComputedReadService,
    private readonly computedAccess: ComputedAccessService,
    private readonly relations: RelationMergeService,
  ) {}

  async get(ctx: DocumentContext, requestId?: string): Promise<DocumentPropertiesDto> {
    const draft = await this.drafts.load(ctx.document, requestId);
    const record = await this.properties.find(ctx.document.uuid);
    const current = record?.properties ?? {};
    const effect = draft.folded?.properties;
    const values = effect ? applyPropertiesEffect(current, effect) : current;
    const version = (record?.version ?? 0) + (effect ? 1 : 0);
    const mask = await this.computedAccess.maskFor(ctx.document, ctx.principal.userId, { fields: draft.metadata.fields });
    const computed = await this.computed.propertyValues(ctx.document, draft.metadata, values, mask);
    return toPropertiesDto(ctx.document, record, computed, version, draft.metadata.properties);
  }

  async write(
    ctx: DocumentContext,
    body: { properties?: unknown; version?: number },
    mode: PropertiesWriteMode,
    params: WriteParams & { version?: number },
  ): Promise<PropertiesWriteResponseDto> {
    if (body.properties === undefined || body.properties === null) {
      throw AppException.validation([{ field: 'properties', reason: 'properties is required' }]);
    }
    if (params.version !== undefined && body.version !== undefined && params.version !== body.version) {
      // Either may carry the lock; two different ones leave unclear which read the caller based the write on.
      throw AppException.validation([
        { field: 'version', reason: `the query's version ${params.version} and the body's version ${body.version} differ: send one` },
      ]);
    }
    const version = params.version ?? body.version;
    const outcome = await this.engine.write(ctx, { ...params, title: 'Update properties' }, async (scope) => {
      try {
        const before = (await scope.properties()).values;
        const change = await buildPropertiesWrite(scope, body.properties as RowValuesInput, mode, version);
        await this.relations.checkPropertyChange(scope, before, change, ctx.principal.userId);
        return [change];
      } catch (error) {
        throw atPropertiesPath(error);
      }
    });
    return this.result(ctx, outcome);
  }

  async remove(ctx: DocumentContext, params: WriteParams & { version?: number }): Promise<PropertiesWriteResponseDto> {
    const outcome = await this.engine.write(ctx, { ...params, title: 'Delete properties' }, async (scope) => [await buildPropertiesDelete(scope, params.version)]);
    return this.result(ctx, outcome);
  }

  /** Every merged change of a property, newest first. */
  async history(ctx: DocumentContext, paging: { page: number; pageSize: number }): Promise<Page<PropertyHistoryEntryDto>> {
    const { items, total } = await this.revisions.history(
      ctx.document.uuid,
      { kind: 'property' },
      { limit: paging.pageSize, offset: (paging.page - 1) * paging.pageSize },
    );
    return pageOf(
      items.map((op) => ({ ...toOperationDto(op, ctx.document.metadata), revisionId: op.revisionId, revisionVersion: op.revisionVersion })),
      total,
      paging,
    );
  }

  private async result(ctx: DocumentContext, outcome: WriteOutcome): Promise<PropertiesWriteResponseDto> {
    const document = (await this.documents.findByUuid(ctx.document.uuid)) ?? ctx.document;
    const view = await this.get({ ...ctx, document }, outcome.merge ? undefined : outcome.request?.id);
    return { ...view, request: toWriteResult(outcome) };
  }
}

/**
 * The values parser names entries `values[i]…` (its row wording); the body key of a properties write is
 * `properties`, so a detail names `properties[i].value` where the caller sent it.
 */
function atPropertiesPath(error: unknown): unknown {
  const details = validationDetailsOf(error);
  if (!details) {
    return error;
  }
  return AppException.validation(
    details.map((detail) =>
      typeof detail.field === 'string' && /^values(\[|\.|$)/.test(detail.field) ? { ...detail, field: `properties${detail.field.slice('values'.length)}` } : detail,
    ),
  );
}
