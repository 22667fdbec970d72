import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf, pageOfList } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { FieldDefinition, FieldType, SelectOption } from '../../documents/fields/field.types.js';
import type { DocumentRecord } from '../../documents/domain/document.records.js';
import { canonicalJson } from '../../documents/domain/metadata-diff.js';
import type { RowDeleteResponseDto, RowWriteResponseDto } from '../../documents/dtos/row.dto.js';
import type { RevisionResponseDto } from '../../documents/dtos/revision.dto.js';
import { DocumentsService } from '../../documents/services/documents.service.js';
import { revisionNotFound } from '../../documents/services/revision-history.service.js';
import { RevisionsService } from '../../documents/services/revisions.service.js';
import { RowsService } from '../../documents/services/rows.service.js';
import type { CatalogRecord, ScField } from '../domain/supply-chain.types.js';
import type {
  BatchUpdateResultDto,
  CatalogResponseDto,
  CreateCatalogDto,
  FieldInputDto,
  UpdateCatalogDto,
} from '../dtos/catalog.dto.js';
import { CatalogRepository } from '../repositories/catalog.repository.js';
import { DocumentWritesService, parseBatchRows } from './document-writes.service.js';
import { fieldIdFrom, toScField } from './field-helpers.js';
import { CATALOG_DOC_TYPE, SupplyChainAccessService } from './supply-chain-access.service.js';
import { RESERVED_KEYS } from '../../../common/http/reserved-keys.js';

const FIELD_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Keys of a document field definition the catalog form passes on unchanged (formula fields and the like). */
const DOCUMENT_FIELD_KEYS = ['unique', 'defaultValue', 'validations', 'formula', 'lookup', 'rollup'] as const;

/**
 * The documents module names a catalog's fields `metadata.fields[i]` (the `/doc` create body); `POST /catalogs`
 * sends them as `fields[i]`, in the same order: the paths are renamed so the error names the request.
 */
function asSentPaths(error: unknown): unknown {
  if (
    !(error instanceof AppException) ||
    error.code !== ErrorCode.VALIDATION_ERROR ||
    !error.options.details
  ) {
    return error;
  }
  const details = error.options.details.map((detail) =>
    typeof detail.field === 'string' && detail.field.startsWith('metadata.fields')
      ? { ...detail, field: detail.field.slice('metadata.'.length) }
      : detail,
  );
  return new AppException(ErrorCode.VALIDATION_ERROR, { ...error.options, details });
}

/**
 * Turns the supply-chain field form (`{id?, name, type, required, description, selectOptions[{label, color}]}`)
 * into document field definitions: ids generated from names (and option ids from labels) when absent.
 */
export function toFieldDefinitions(
  fields: FieldInputDto[],
  path = 'fields',
  taken: Set<string> = new Set(),
): { definitions: FieldDefinition[]; descriptions: Record<string, string> } {
  const errors: ErrorDetail[] = [];
  const definitions: FieldDefinition[] = [];
  const descriptions: Record<string, string> = {};
  for (const field of fields) {
    if (field.id !== undefined) {
      taken.add(field.id);
    }
  }
  fields.forEach((field, index) => {
    if (field.id !== undefined && !FIELD_ID.test(field.id)) {
      errors.push({ field: `${path}[${index}].id`, reason: 'id must match ^[A-Za-z0-9_-]{1,64}$' });
      return;
    }
    if (field.id !== undefined && RESERVED_KEYS.has(field.id)) {
      errors.push({ field: `${path}[${index}].id`, reason: `"${field.id}" is reserved (a JavaScript object member name)` });
      return;
    }
    const id = field.id ?? fieldIdFrom(field.name, taken);
    const definition: FieldDefinition = { id, name: field.name, type: field.type as FieldType };
    if (field.required !== undefined) {
      definition.required = field.required;
    }
    // The document field definition's other keys go as sent: the documents module checks them.
    for (const key of DOCUMENT_FIELD_KEYS) {
      if (field[key] !== undefined) {
        (definition as unknown as Record<string, unknown>)[key] = field[key];
      }
    }
    if (field.selectOptions) {
      const optionIds = new Set(field.selectOptions.flatMap((option) => (option.id ? [option.id] : [])));
      definition.selectOptions = field.selectOptions.map((option): SelectOption => {
        const result: SelectOption = {
          id: option.id ?? fieldIdFrom(option.label, optionIds, 'option'),
          label: option.label,
        };
        if (option.color !== undefined) {
          result.color = option.color;
        }
        return result;
      });
    }
    if (field.description !== undefined) {
      descriptions[id] = field.description;
    }
    definitions.push(definition);
  });
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  return { definitions, descriptions };
}

export function catalogDto(catalog: CatalogRecord, document: DocumentRecord): CatalogResponseDto {
  return {
    id: catalog.id,
    organizationId: catalog.organizationId,
    workspaceId: null,
    docType: CATALOG_DOC_TYPE,
    name: catalog.name,
    description: catalog.description,
    catalogType: catalog.catalogType,
    sharingEnabled: catalog.sharingEnabled,
    fields: document.metadata.fields.map((field) => toScField(field, catalog.fieldDescriptions)),
    rowCount: document.rowCount,
    version: document.version,
    createdBy: catalog.createdBy,
    createdAt: new Date(catalog.createdAt).toISOString(),
    updatedAt: new Date(catalog.updatedAt).toISOString(),
  };
}

/**
 * A PATCH body that is the catalog as read: `id`, `docType` and `fields`, when sent, must be the catalog's as it is.
 * Fields change only through the document metadata, so changed fields are refused rather than silently dropped.
 */
function requireOwnIdentity(current: CatalogResponseDto, dto: UpdateCatalogDto): void {
  const problems: ErrorDetail[] = [];
  // UUIDs compare case-insensitively; PostgreSQL answers them in lower case.
  if (dto.id !== undefined && (typeof dto.id !== 'string' || dto.id.toLowerCase() !== current.id)) {
    problems.push({ field: 'id', reason: 'must be the id in the path' });
  }
  if (dto.docType !== undefined && dto.docType !== current.docType) {
    problems.push({ field: 'docType', reason: `must be ${current.docType}` });
  }
  if (dto.fields !== undefined && canonicalJson(dto.fields) !== canonicalJson(current.fields)) {
    problems.push({
      field: 'fields',
      reason: `fields change through PUT /doc/catalog/${current.id}/metadata; send them as read or leave them out`,
    });
  }
  if (problems.length > 0) {
    throw AppException.validation(problems);
  }
}

/** Catalogs: organization-level documents of type `catalog` plus their supply-chain record (docs/supply-chain.md). */
@Injectable()
export class CatalogsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: SupplyChainAccessService,
    private readonly catalogs: CatalogRepository,
    private readonly documents: DocumentsService,
    private readonly rows: RowsService,
    private readonly revisions: RevisionsService,
    private readonly writes: DocumentWritesService,
  ) {}

  /** Owners, admins and members create catalogs (the organization-level document write right). */
  async create(
    principal: Principal,
    organizationId: string,
    dto: CreateCatalogDto,
  ): Promise<CatalogResponseDto> {
    await this.access.member(principal, organizationId, 'member');
    const { definitions, descriptions } = toFieldDefinitions(dto.fields ?? []);
    const id = randomUUID();
    return this.tx.run(async () => {
      await this.documents
        .create(
          principal,
          CATALOG_DOC_TYPE,
          {
            id,
            organizationId,
            workspaceId: null,
            title: dto.name,
            metadata: { fields: definitions as unknown as Array<Record<string, unknown>>, properties: [] },
          },
          { organizationId },
        )
        .catch((error: unknown) => {
          throw asSentPaths(error);
        });
      // The caller's write right was established by documents.create; the catalog record does not exist yet.
      const ctx = await this.access.openAsSystem(principal.userId, organizationId, CATALOG_DOC_TYPE, id);
      const catalog = await this.catalogs.insertCatalog({
        id,
        organizationId,
        documentId: ctx.document.uuid,
        name: dto.name,
        description: dto.description ?? null,
        catalogType: dto.catalogType,
        sharingEnabled: dto.sharingEnabled ?? true,
        fieldDescriptions: descriptions,
        createdBy: principal.userId,
      });
      return catalogDto(catalog, ctx.document);
    });
  }

  async list(
    principal: Principal,
    organizationId: string,
    query: { page: number; pageSize: number },
  ): Promise<Page<CatalogResponseDto>> {
    await this.access.member(principal, organizationId);
    // Any member lists them; those whose `permissions.view` (the document's or the type's) shuts the caller out are
    // left out before paging — one closed item used to refuse the whole list (docs/supply-chain.md, "Routes").
    const viewer = await this.access.viewNarrowing(principal, organizationId, CATALOG_DOC_TYPE);
    if (viewer === 'none') {
      return pageOf([], 0, query);
    }
    const { items, total } = await this.catalogs.listCatalogs(organizationId, viewer === 'all' ? null : viewer, {
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    const dtos: CatalogResponseDto[] = [];
    for (const catalog of items) {
      const document = await this.access.listedDocument(principal, organizationId, CATALOG_DOC_TYPE, catalog.id);
      if (document !== null) {
        dtos.push(catalogDto(catalog, document));
      }
    }
    return pageOf(dtos, total, query);
  }

  async get(principal: Principal, organizationId: string, catalogId: string): Promise<CatalogResponseDto> {
    const { catalog, ctx } = await this.access.catalog(principal, organizationId, catalogId, 'read');
    return catalogDto(catalog, ctx.document);
  }

  /** Name, description, type and sharing: owners and admins (manage). */
  async update(
    principal: Principal,
    organizationId: string,
    catalogId: string,
    dto: UpdateCatalogDto,
  ): Promise<CatalogResponseDto> {
    const { catalog, ctx } = await this.access.catalog(principal, organizationId, catalogId, 'manage');
    requireOwnIdentity(catalogDto(catalog, ctx.document), dto);
    const updated = await this.catalogs.updateCatalog(catalog.id, dto);
    return catalogDto(updated ?? catalog, ctx.document);
  }

  /** The fields in document order, paged like every list of the module (docs/supply-chain.md, "Routes"). */
  async fields(
    principal: Principal,
    organizationId: string,
    catalogId: string,
    query: { page: number; pageSize: number },
  ): Promise<Page<ScField>> {
    const { catalog, ctx } = await this.access.catalog(principal, organizationId, catalogId, 'read');
    return pageOfList(
      ctx.document.metadata.fields.map((field) => toScField(field, catalog.fieldDescriptions)),
      query,
    );
  }

  async updateRow(
    principal: Principal,
    organizationId: string,
    catalogId: string,
    rowId: string,
    body: { values: unknown; version?: number },
    requestId?: string,
  ): Promise<RowWriteResponseDto> {
    const { ctx } = await this.access.catalog(principal, organizationId, catalogId, 'write');
    return this.rows.update(ctx, rowId, body, requestId ? { requestId } : {});
  }

  async deleteRow(
    principal: Principal,
    organizationId: string,
    catalogId: string,
    rowId: string,
    requestId?: string,
  ): Promise<RowDeleteResponseDto> {
    const { ctx } = await this.access.catalog(principal, organizationId, catalogId, 'write');
    return this.rows.remove(ctx, rowId, requestId ? { requestId } : {});
  }

  async batchUpdate(
    principal: Principal,
    organizationId: string,
    catalogId: string,
    body: { rows: unknown },
    requestId?: string,
  ): Promise<BatchUpdateResultDto> {
    const ops = parseBatchRows(body.rows);
    const { ctx } = await this.access.catalog(principal, organizationId, catalogId, 'write');
    return this.writes.batch(ctx, ops, requestId, `Catalog batch update of ${ops.length} rows`);
  }

  async revisionsSince(
    principal: Principal,
    organizationId: string,
    catalogId: string,
    since: string | undefined,
    query: { page: number; pageSize: number },
  ): Promise<Page<RevisionResponseDto>> {
    const { ctx } = await this.access.catalog(principal, organizationId, catalogId, 'read');
    try {
      return await this.revisions.listSince(ctx, since, query);
    } catch (error) {
      // The documents module names its revision parameter `revId`; here the unknown id came as `since`.
      if (error instanceof AppException && error.code === ErrorCode.NOT_FOUND) {
        throw revisionNotFound('since');
      }
      throw error;
    }
  }
}
