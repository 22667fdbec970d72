import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentRecord } from '../../documents/domain/document.records.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { type DocumentContext, docNotFound } from '../../documents/services/document-access.service.js';
import type { MetadataChange } from '../../documents/services/metadata-change-listeners.js';
import { RowQueryService } from '../../documents/services/row-query.service.js';
import { DocumentFacts } from '../../documents/services/document-facts.service.js';
import { TypeSettingsService } from '../../documents/services/type-settings.service.js';
import { documentEvent } from '../../events/domain-event.js';
import { OutboxService } from '../../events/outbox.service.js';
import { chartAggregation, cleanViewConfig, settledViewConfig, validateViewConfig } from '../domain/view-config.js';
import type { ChartSeriesDto, CreateViewDto, UpdateViewDto, ViewResponseDto } from '../dtos/view.dto.js';
import { type ViewRecord, ViewRepository } from '../repositories/view.repository.js';

type ViewEvent = 'view_created' | 'view_updated' | 'view_deleted' | 'view_default_changed';

/** Most points a chart series answers (its first groups in key order). */
const MAX_SERIES_POINTS = 1000;

/** Most views the bundle lists. */
const BUNDLE_VIEWS = 100;

function viewNotFound(viewId: string): AppException {
  return new AppException(ErrorCode.NOT_FOUND, { details: [{ field: 'viewId', reason: `view ${viewId} not found` }] });
}

/** The document's default view: its own default, else the type-level `defaultViewId` when it names one of its views. */
interface DefaultView {
  id: string | null;
  source: 'document' | 'type' | null;
}

function toDto(view: ViewRecord, defaults: DefaultView): ViewResponseDto {
  const isDefault = defaults.id === view.id;
  return {
    id: view.id,
    name: view.name,
    type: view.type,
    config: settledViewConfig(view.config),
    isDefault,
    defaultSource: isDefault ? defaults.source : null,
    createdAt: view.createdAt.toISOString(),
    createdBy: view.createdBy,
    updatedAt: view.updatedAt.toISOString(),
    updatedBy: view.updatedBy,
  };
}

/**
 * Views of a document (spec 2.7, docs/views.md): validated against the metadata, written with their event in one
 * transaction, applied to reads through the documents module's ViewResolver, kept valid when fields change (the
 * merge calls fieldsChanged), and listed in the bundle.
 */
@Injectable()
export class ViewsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly views: ViewRepository,
    private readonly outbox: OutboxService,
    private readonly typeSettings: TypeSettingsService,
    private readonly rowQueries: RowQueryService,
    private readonly facts: DocumentFacts,
  ) {}

  async list(ctx: DocumentContext, paging: { page: number; pageSize: number }): Promise<Page<ViewResponseDto>> {
    const { items, total } = await this.views.list(ctx.document.uuid, { limit: paging.pageSize, offset: (paging.page - 1) * paging.pageSize });
    const defaults = await this.defaults(ctx.document);
    return pageOf(
      items.map((view) => toDto(view, defaults)),
      total,
      paging,
    );
  }

  /** The bundle's `views` section: the first 100 views, in the bundle's snapshot. */
  async bundleSection(ctx: DocumentContext): Promise<ViewResponseDto[]> {
    return (await this.list(ctx, { page: 1, pageSize: BUNDLE_VIEWS })).items;
  }

  async get(ctx: DocumentContext, viewId: string): Promise<ViewResponseDto> {
    const view = await this.views.find(ctx.document.uuid, viewId);
    if (!view) {
      throw viewNotFound(viewId);
    }
    return toDto(view, await this.defaults(ctx.document));
  }

  async create(ctx: DocumentContext, dto: CreateViewDto): Promise<ViewResponseDto> {
    const { document, principal } = ctx;
    const view = await this.tx.run(async () => {
      const config = validateViewConfig(dto.config, await this.lockFields(document));
      // The new view may become the effective default (below): decided under the lock of setDefault and remove.
      await this.views.lockDefault(document.uuid);
      const inserted = await this.views.insert({
        documentUuid: document.uuid,
        id: dto.id ?? randomUUID(),
        organizationId: document.organizationId,
        workspaceId: document.workspaceId,
        name: dto.name,
        type: dto.type,
        config,
        createdBy: principal.userId,
      });
      if (!inserted) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, { details: [{ field: 'id', reason: `view ${dto.id ?? ''} already exists in this document` }] });
      }
      await this.record(document, 'view_created', inserted, principal.userId);
      // A view with the id the type-level `defaultViewId` names becomes the default of a document without one of
      // its own (the fallback): its effective default changes from none to it, as deleting it changes it back.
      if ((await this.typeSettings.defaultViewId(document)) === inserted.id && (await this.views.findDefault(document.uuid)) === null) {
        await this.record(document, 'view_default_changed', inserted, principal.userId, { previousDefaultViewId: null });
      }
      return inserted;
    });
    return toDto(view, await this.defaults(document));
  }

  async update(ctx: DocumentContext, viewId: string, dto: UpdateViewDto): Promise<ViewResponseDto> {
    const { document, principal } = ctx;
    if (dto.id !== undefined && dto.id !== viewId) {
      throw AppException.validation([{ field: 'id', reason: `the body names view ${dto.id}, the path ${viewId}` }]);
    }
    const view = await this.tx.run(async () => {
      const fields = await this.lockFields(document);
      const current = await this.views.find(document.uuid, viewId, true);
      if (!current) {
        throw viewNotFound(viewId);
      }
      const config = dto.config === undefined ? settledViewConfig(current.config) : validateViewConfig(dto.config, fields);
      const updated = await this.views.update(document.uuid, viewId, { name: dto.name ?? current.name, type: dto.type ?? current.type, config, updatedBy: principal.userId });
      await this.record(document, 'view_updated', updated, principal.userId);
      return updated;
    });
    return toDto(view, await this.defaults(document));
  }

  async remove(ctx: DocumentContext, viewId: string): Promise<ViewResponseDto> {
    const { document, principal } = ctx;
    const defaults = await this.defaults(document);
    const view = await this.tx.run(async () => {
      // The deleted view may be the default: its successor is decided under the same lock as setDefault.
      await this.views.lockDefault(document.uuid);
      const current = await this.views.find(document.uuid, viewId, true);
      if (!current) {
        throw viewNotFound(viewId);
      }
      await this.views.delete(document.uuid, viewId);
      await this.record(document, 'view_deleted', current, principal.userId);
      if (!current.isDefault) {
        // Not the document's own default, but it may have been its effective one: the type-level `defaultViewId`
        // names it and the document has no default of its own. The default is then none (the type-level setting
        // names no other view of this document: view ids are unique per document).
        if ((await this.views.findDefault(document.uuid)) === null && (await this.typeSettings.defaultViewId(document)) === viewId) {
          await this.record(document, 'view_default_changed', null, principal.userId, { previousDefaultViewId: viewId });
        }
      } else {
        // The document's own default went with it: the default is now the type-level one, or none (spec 6.2
        // "default change"; docs/views.md, "Events").
        const typeDefault = await this.typeSettings.defaultViewId(document);
        const fallback = typeDefault && typeDefault !== viewId ? await this.views.find(document.uuid, typeDefault) : null;
        // The fallback's row is not changed (the type-level default is no flag of it): the event carries it as
        // stored, as GET answers it. Without a fallback the payload's view fields are null.
        await this.record(document, 'view_default_changed', fallback, principal.userId, { previousDefaultViewId: viewId });
      }
      return current;
    });
    return toDto(view, defaults);
  }

  async setDefault(ctx: DocumentContext, viewId: string): Promise<ViewResponseDto> {
    const { document, principal } = ctx;
    await this.tx.run(async () => {
      await this.views.lockDefault(document.uuid);
      const current = await this.views.find(document.uuid, viewId, true);
      if (!current) {
        throw viewNotFound(viewId);
      }
      if (current.isDefault) {
        return;
      }
      const { view, previousDefaultId } = await this.views.setDefault(document.uuid, viewId, principal.userId);
      await this.record(document, 'view_default_changed', view, principal.userId, { previousDefaultViewId: previousDefaultId });
    });
    return this.get(ctx, viewId);
  }

  /** `GET /views/{viewId}/series`: the chart's rows (the view's filters) grouped by xField, yField aggregated in SQL. */
  async series(ctx: DocumentContext, viewId: string, requestId?: string): Promise<ChartSeriesDto> {
    const view = await this.views.find(ctx.document.uuid, viewId);
    if (!view) {
      throw viewNotFound(viewId);
    }
    const chart = settledViewConfig(view.config).chartConfig;
    if (view.type !== 'chart' || typeof chart !== 'object' || chart === null || typeof (chart as Record<string, unknown>).xField !== 'string') {
      throw AppException.validation([{ field: 'viewId', reason: 'series needs a chart view with chartConfig.xField' }]);
    }
    const config = chart as Record<string, unknown>;
    const xField = config.xField as string;
    const yField = typeof config.yField === 'string' ? config.yField : null;
    const aggregation = chartAggregation(config);
    const groupBy = { fields: [xField], aggregations: [aggregation === 'count' || yField === null ? { kind: 'count' } : { kind: aggregation, field: yField }] };
    // The view is applied by the query engine itself (its filters; groups ignore sorts), like GET /data?viewId=.
    // Its first MAX_SERIES_POINTS groups, in key order, in one statement.
    const { groups } = await this.rowQueries.firstGroups(ctx, { groupBy }, MAX_SERIES_POINTS, requestId, viewId);
    return {
      viewId,
      chartType: String(config.chartType),
      xField,
      yField,
      aggregation: yField === null ? 'count' : aggregation,
      points: groups.map((group) => {
        const value = group.aggregations[0]?.value;
        return { x: group.keys[0]?.value ?? null, y: value === null || value === undefined ? null : Number(value) };
      }),
    };
  }

  /** The ViewResolver lookup: a view's config, for applying it to reads. */
  async lookup(document: DocumentRecord, viewId: string): Promise<Record<string, unknown> | null> {
    return (await this.views.find(document.uuid, viewId))?.config ?? null;
  }

  /**
   * Merge hook (inside the merge transaction): after fields were deleted or changed, every view of the document
   * whose config referred to them is cleaned and a `view_updated` event records it (with the revision, the
   * previous config and the removed field ids).
   */
  async fieldsChanged(change: MetadataChange): Promise<void> {
    if (change.deletedFieldIds.length === 0 && change.updatedFieldIds.length === 0) {
      return;
    }
    for (const view of await this.views.lockAll(change.document.uuid)) {
      const cleaned = cleanViewConfig(view.config, change.after.fields);
      if (!cleaned.changed) {
        continue;
      }
      const updated = await this.views.update(view.documentUuid, view.id, { name: view.name, type: view.type, config: cleaned.config, updatedBy: change.mergedBy });
      await this.record(change.document, 'view_updated', updated, change.mergedBy, {
        reason: 'fields-changed',
        revisionId: change.revisionId,
        deletedFieldIds: change.deletedFieldIds,
        updatedFieldIds: change.updatedFieldIds,
        previousConfig: view.config,
      });
    }
  }

  private async lockFields(document: DocumentRecord): Promise<FieldDefinition[]> {
    const fields = await this.facts.lockFields(document);
    if (!fields) {
      throw docNotFound();
    }
    return fields;
  }

  private async defaults(document: DocumentRecord): Promise<DefaultView> {
    const own = await this.views.findDefault(document.uuid);
    if (own) {
      return { id: own, source: 'document' };
    }
    const typeDefault = await this.typeSettings.defaultViewId(document);
    if (typeDefault && (await this.views.find(document.uuid, typeDefault))) {
      return { id: typeDefault, source: 'type' };
    }
    return { id: null, source: null };
  }

  /**
   * Spec 6.2 view payload: viewId, name, type, filters, createdBy, createdAt (+ updatedBy/updatedAt and extras); null
   * fields without a view. `view` is the row as stored (after the change, or as it was deleted), so the event says
   * what the REST answer says; who acted is the envelope's `triggeredBy`.
   */
  private async record(document: DocumentRecord, event: ViewEvent, view: ViewRecord | null, by: string, extra: Record<string, unknown> = {}): Promise<void> {
    const payload = {
      viewId: view?.id ?? null,
      name: view?.name ?? null,
      type: view?.type ?? null,
      filters: view ? (view.config.filters ?? view.config.filter ?? null) : null,
      createdBy: view?.createdBy ?? null,
      createdAt: view?.createdAt.toISOString() ?? null,
      updatedBy: view?.updatedBy ?? null,
      updatedAt: view?.updatedAt.toISOString() ?? null,
      ...extra,
    };
    await this.outbox.record(documentEvent(document, event, by, payload));
  }
}
