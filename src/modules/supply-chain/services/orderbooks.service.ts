import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { type Page, pageOf, pageOfList } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentRecord } from '../../documents/domain/document.records.js';
import type { FieldDefinition, FieldType } from '../../documents/fields/field.types.js';
import { DocumentsService } from '../../documents/services/documents.service.js';
import { type MappingPreview, previewMapping } from '../domain/field-mapping-preview.js';
import type { ConnectionRecord, GeneratedField, OrderBookRecord } from '../domain/supply-chain.types.js';
import type { BatchUpdateResultDto } from '../dtos/catalog.dto.js';
import type {
  CreateOrderBookDto,
  FieldMappingPreviewDto,
  OrderBookFieldDto,
  OrderBookResponseDto,
} from '../dtos/orderbook.dto.js';
import { CatalogRepository } from '../repositories/catalog.repository.js';
import { toFieldDefinitions } from './catalogs.service.js';
import { ConnectionAdmissionService, connectionInvalidState } from './connection-admission.service.js';
import { ConnectionsService } from './connections.service.js';
import { DocumentWritesService, parseBatchRows } from './document-writes.service.js';
import { fieldIdFrom, toScField } from './field-helpers.js';
import {
  CATALOG_DOC_TYPE,
  notFound,
  ORDERBOOK_DOC_TYPE,
  SupplyChainAccessService,
} from './supply-chain-access.service.js';

/** Catalog field types that cannot be stored as such in another document: what the generated field becomes. */
const GENERATED_TYPE: Partial<Record<FieldType, FieldType>> = {
  formula: 'text',
  lookup: 'text',
  rollup: 'text',
  relation: 'text',
  user: 'text',
  collaborator: 'text',
  created_by: 'text',
  updated_by: 'text',
  auto_number: 'number',
  created_time: 'datetime',
  updated_time: 'datetime',
};

export function orderBookDto(orderBook: OrderBookRecord, document: DocumentRecord): OrderBookResponseDto {
  return {
    id: orderBook.id,
    organizationId: orderBook.organizationId,
    workspaceId: null,
    docType: ORDERBOOK_DOC_TYPE,
    name: orderBook.name,
    description: orderBook.description,
    sourceConnectionIds: orderBook.sourceConnectionIds,
    generatedFields: orderBook.generatedFields,
    fields: document.metadata.fields.map((field) => toScField(field, orderBook.fieldDescriptions)),
    rowCount: document.rowCount,
    version: document.version,
    createdBy: orderBook.createdBy,
    createdAt: new Date(orderBook.createdAt).toISOString(),
    updatedAt: new Date(orderBook.updatedAt).toISOString(),
  };
}

/**
 * Order books: organization-level documents of type `orderbook` (owned by the buyer). Fields generated from the
 * catalogs of `sourceConnectionIds` (the buyer must be allowed to see each connection) plus custom fields.
 */
@Injectable()
export class OrderBooksService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: SupplyChainAccessService,
    private readonly catalogs: CatalogRepository,
    private readonly documents: DocumentsService,
    private readonly connections: ConnectionsService,
    private readonly admission: ConnectionAdmissionService,
    private readonly writes: DocumentWritesService,
  ) {}

  async create(
    principal: Principal,
    organizationId: string,
    dto: CreateOrderBookDto,
  ): Promise<OrderBookResponseDto> {
    await this.access.member(principal, organizationId, 'member');
    const connectionIds = [...new Set((dto.sourceConnectionIds ?? []).map((id) => id.toLowerCase()))];
    const taken = new Set<string>((dto.fields ?? []).flatMap((field) => (field.id ? [field.id] : [])));
    const generated: GeneratedField[] = [];
    const generatedDefinitions: FieldDefinition[] = [];
    for (const connectionId of connectionIds) {
      const connection = usable(await this.admission.forBuyer(organizationId, connectionId, dto.shareCode));
      for (const field of await this.sourceFields(connection)) {
        const id = fieldIdFrom(field.id, taken);
        const type = GENERATED_TYPE[field.type] ?? field.type;
        const definition: FieldDefinition = { id, name: field.name, type };
        if (field.selectOptions && (type === 'single_select' || type === 'multi_select')) {
          definition.selectOptions = field.selectOptions;
        }
        generatedDefinitions.push(definition);
        generated.push({
          id,
          name: field.name,
          type,
          sourceCatalogId: connection.catalogId,
          sourceFieldId: field.id,
          connectionId: connection.id,
        });
      }
    }
    const custom = toFieldDefinitions(dto.fields ?? [], 'fields', taken);
    const id = randomUUID();
    return this.tx.run(async () => {
      await this.documents.create(
        principal,
        ORDERBOOK_DOC_TYPE,
        {
          id,
          organizationId,
          workspaceId: null,
          title: dto.name,
          metadata: {
            fields: [...generatedDefinitions, ...custom.definitions] as unknown as Array<
              Record<string, unknown>
            >,
            properties: [],
          },
        },
        { organizationId },
      );
      const ctx = await this.access.openAsSystem(principal.userId, organizationId, ORDERBOOK_DOC_TYPE, id);
      const orderBook = await this.catalogs.insertOrderBook({
        id,
        organizationId,
        documentId: ctx.document.uuid,
        name: dto.name,
        description: dto.description ?? null,
        generatedFields: generated,
        fieldDescriptions: custom.descriptions,
        sourceConnectionIds: connectionIds,
        createdBy: principal.userId,
      });
      return orderBookDto(orderBook, ctx.document);
    });
  }

  async list(
    principal: Principal,
    organizationId: string,
    query: { page: number; pageSize: number },
  ): Promise<Page<OrderBookResponseDto>> {
    await this.access.member(principal, organizationId);
    // Any member lists them; those whose `permissions.view` (the document's or the type's) shuts the caller out are
    // left out before paging — one closed item used to refuse the whole list (docs/supply-chain.md, "Routes").
    const viewer = await this.access.viewNarrowing(principal, organizationId, ORDERBOOK_DOC_TYPE);
    if (viewer === 'none') {
      return pageOf([], 0, query);
    }
    const { items, total } = await this.catalogs.listOrderBooks(organizationId, viewer === 'all' ? null : viewer, {
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    const dtos: OrderBookResponseDto[] = [];
    for (const orderBook of items) {
      const document = await this.access.listedDocument(principal, organizationId, ORDERBOOK_DOC_TYPE, orderBook.id);
      if (document !== null) {
        dtos.push(orderBookDto(orderBook, document));
      }
    }
    return pageOf(dtos, total, query);
  }

  async get(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
  ): Promise<OrderBookResponseDto> {
    const { orderBook, ctx } = await this.access.orderBook(principal, organizationId, orderBookId, 'read');
    return orderBookDto(orderBook, ctx.document);
  }

  /**
   * The fields in document order, paged like every list; generated ones carry `sourceCatalogId` and `sourceFieldId`
   * (null for custom fields).
   */
  async fields(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    query: { page: number; pageSize: number },
  ): Promise<Page<OrderBookFieldDto>> {
    const { orderBook, ctx } = await this.access.orderBook(principal, organizationId, orderBookId, 'read');
    const generated = new Map(orderBook.generatedFields.map((field) => [field.id, field]));
    const fields = ctx.document.metadata.fields.map((field) => {
      const source = generated.get(field.id);
      return {
        ...toScField(field, orderBook.fieldDescriptions),
        sourceCatalogId: source?.sourceCatalogId ?? null,
        sourceFieldId: source?.sourceFieldId ?? null,
      };
    });
    return pageOfList(fields, query);
  }

  async batchUpdate(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    body: { rows: unknown },
    requestId?: string,
  ): Promise<BatchUpdateResultDto> {
    const ops = parseBatchRows(body.rows);
    const { ctx } = await this.access.orderBook(principal, organizationId, orderBookId, 'write');
    return this.writes.batch(ctx, ops, requestId, `Order-book batch update of ${ops.length} rows`);
  }

  /** Suggested mapping from the connection's catalog fields to the order book's fields (docs/supply-chain.md). */
  async preview(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    dto: FieldMappingPreviewDto,
  ): Promise<MappingPreview> {
    const { orderBook, ctx } = await this.access.orderBook(principal, organizationId, orderBookId, 'read');
    const connection = usable(await this.admission.forBuyer(organizationId, dto.connectionId, dto.shareCode));
    const sourceFields = (await this.sourceFields(connection)).map((field) => toScField(field, {}));
    const targetFields = ctx.document.metadata.fields.map((field) =>
      toScField(field, orderBook.fieldDescriptions),
    );
    return previewMapping(connection.catalogId, sourceFields, targetFields, orderBook.generatedFields);
  }

  /** The shared fields of a connection's catalog (every field of the catalog). */
  async sourceFields(connection: ConnectionRecord): Promise<FieldDefinition[]> {
    const catalog = await this.catalogs.findCatalogById(connection.catalogId);
    if (!catalog) {
      throw notFound('connection');
    }
    const ctx = await this.access.openAsSystem(
      catalog.createdBy,
      catalog.organizationId,
      CATALOG_DOC_TYPE,
      catalog.id,
    );
    return ctx.document.metadata.fields;
  }
}

/**
 * A disabled connection (by POST …/disable, or because its catalog was deleted) shares nothing more: order-book
 * fields and previews from it are refused as a binding to it is, 409 INVALID_STATE (payload {connectionId, status}),
 * not NOT_FOUND — the buyer still sees it, disabled, through GET.
 */
function usable(connection: ConnectionRecord): ConnectionRecord {
  if (connection.status === 'disabled') {
    throw connectionInvalidState(connection, 'the connection is disabled: it shares no fields any more');
  }
  return connection;
}
