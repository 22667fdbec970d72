import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import type { ConnectorConfig, ConnectorRecord, ConnectorType } from '../domain/supply-chain.types.js';
import type { ConnectorResponseDto, CreateConnectorDto } from '../dtos/connector.dto.js';
import { ConfigChecker } from '../dtos/sync-config.validation.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import {
  filterFieldRefs,
  filterOperandDetails,
  formulaSourceFieldIds,
  unknownFieldDetails,
} from '../dtos/sync-config-fields.validation.js';
import { ConnectorRepository } from '../repositories/connector.repository.js';
import { isUuid } from '../repositories/sql.js';
import {
  CATALOG_DOC_TYPE,
  notFound,
  ORDERBOOK_DOC_TYPE,
  SupplyChainAccessService,
} from './supply-chain-access.service.js';

const SOURCE_TYPE: Record<ConnectorType, string> = {
  orderbook_to_catalog: ORDERBOOK_DOC_TYPE,
  catalog_clone: CATALOG_DOC_TYPE,
};
const CONFIG_KEY: Record<ConnectorType, 'orderbookToCatalogConfig' | 'catalogCloneConfig'> = {
  orderbook_to_catalog: 'orderbookToCatalogConfig',
  catalog_clone: 'catalogCloneConfig',
};

export function connectorDto(record: ConnectorRecord): ConnectorResponseDto {
  return {
    id: record.id,
    organizationId: record.organizationId,
    name: record.name,
    connectorType: record.connectorType,
    sourceDocId: record.sourceDocId,
    sourceDocType: record.sourceDocType,
    targetDocId: record.targetDocId,
    targetDocType: record.targetDocType,
    [CONFIG_KEY[record.connectorType]]: record.config,
    syncMode: record.syncMode,
    status: record.status,
    createdBy: record.createdBy,
    createdAt: new Date(record.createdAt).toISOString(),
    updatedAt: new Date(record.updatedAt).toISOString(),
  };
}

/**
 * Connectors inside one organization (docs/supply-chain.md, "Connectors"): `orderbook_to_catalog` (an order book
 * into a catalog) and `catalog_clone` (a catalog into another). Owners and admins create, pause, resume and delete
 * them; every member reads. The propagation module runs them.
 */
@Injectable()
export class ConnectorsService {
  constructor(
    private readonly access: SupplyChainAccessService,
    private readonly connectors: ConnectorRepository,
  ) {}

  async create(
    principal: Principal,
    organizationId: string,
    dto: CreateConnectorDto,
  ): Promise<ConnectorResponseDto> {
    await this.access.member(principal, organizationId, 'admin');
    const type = dto.connectorType as ConnectorType;
    const sourceDocType = dto.sourceDocType ?? SOURCE_TYPE[type];
    const targetDocType = dto.targetDocType ?? CATALOG_DOC_TYPE;
    const checker = new ConfigChecker();
    if (sourceDocType !== SOURCE_TYPE[type]) {
      checker.fail('sourceDocType', `${type} reads a ${SOURCE_TYPE[type]}`);
    }
    if (targetDocType !== CATALOG_DOC_TYPE) {
      checker.fail('targetDocType', `${type} writes a catalog`);
    }
    if (sourceDocType === targetDocType && dto.sourceDocId === dto.targetDocId) {
      checker.fail('targetDocId', 'source and target must be different documents');
    }
    const wrongKey = CONFIG_KEY[type === 'catalog_clone' ? 'orderbook_to_catalog' : 'catalog_clone'];
    if (dto[wrongKey] !== undefined) {
      checker.fail(wrongKey, `${wrongKey} does not apply to ${type}; use ${CONFIG_KEY[type]}`);
    }
    const config = checker.connectorConfig(dto[CONFIG_KEY[type]], CONFIG_KEY[type]);
    checker.done();
    const source =
      sourceDocType === CATALOG_DOC_TYPE
        ? (await this.access.catalog(principal, organizationId, dto.sourceDocId, 'read')).ctx
        : (await this.access.orderBook(principal, organizationId, dto.sourceDocId, 'read')).ctx;
    const target = (await this.access.catalog(principal, organizationId, dto.targetDocId, 'write')).ctx;
    this.checkFields(
      config as ConnectorConfig,
      CONFIG_KEY[type],
      source.document.metadata.fields,
      new Set(target.document.metadata.fields.map((field) => field.id)),
    );
    const record = await this.connectors.insert({
      organizationId,
      name: dto.name,
      connectorType: type,
      sourceDocType,
      sourceDocId: source.document.docId,
      sourceDocumentId: source.document.uuid,
      targetDocType,
      targetDocId: target.document.docId,
      targetDocumentId: target.document.uuid,
      config: config as ConnectorConfig,
      syncMode: (config as ConnectorConfig).syncMode,
      scheduleCron: config?.scheduleConfig?.cron ?? null,
      scheduleTimezone: config?.scheduleConfig?.timezone ?? null,
      bidirectional: (config as ConnectorConfig).bidirectional,
      createdBy: principal.userId,
    });
    return connectorDto(record);
  }

  async list(
    principal: Principal,
    organizationId: string,
    query: { page: number; pageSize: number },
  ): Promise<Page<ConnectorResponseDto>> {
    await this.access.member(principal, organizationId);
    const { items, total } = await this.connectors.list(organizationId, {
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    return pageOf(items.map(connectorDto), total, query);
  }

  async get(
    principal: Principal,
    organizationId: string,
    connectorId: string,
  ): Promise<ConnectorResponseDto> {
    await this.access.member(principal, organizationId);
    return connectorDto(await this.find(organizationId, connectorId));
  }

  async setStatus(
    principal: Principal,
    organizationId: string,
    connectorId: string,
    status: 'active' | 'paused',
  ): Promise<ConnectorResponseDto> {
    await this.access.member(principal, organizationId, 'admin');
    const current = await this.find(organizationId, connectorId);
    const from = status === 'paused' ? 'active' : 'paused';
    // Only from the other state (as a connection's pause/resume): a no-op move is 409, not a 200 that looks like one.
    // The update is conditional, so of two concurrent pauses exactly one succeeds.
    const updated = await this.connectors.setStatus(organizationId, connectorId, status, from);
    if (!updated) {
      const now = (await this.connectors.find(organizationId, connectorId)) ?? current;
      throw new AppException(ErrorCode.INVALID_STATE, {
        details: [
          {
            field: 'status',
            reason: `${status === 'paused' ? 'pause' : 'resume'} needs a connector in state ${from}; it is ${now.status}`,
          },
        ],
        payload: { connectorId: now.id, status: now.status },
      });
    }
    return connectorDto(updated);
  }

  async remove(principal: Principal, organizationId: string, connectorId: string): Promise<null> {
    await this.access.member(principal, organizationId, 'admin');
    if (!isUuid(connectorId) || !(await this.connectors.softDelete(organizationId, connectorId))) {
      throw notFound('connector');
    }
    return null;
  }

  private async find(organizationId: string, connectorId: string): Promise<ConnectorRecord> {
    const record = isUuid(connectorId) ? await this.connectors.find(organizationId, connectorId) : null;
    if (!record) {
      throw notFound('connector');
    }
    return record;
  }

  private checkFields(
    config: ConnectorConfig,
    key: string,
    source: readonly FieldDefinition[],
    target: Set<string>,
  ): void {
    const sourceRefs: Array<[string, string]> = [];
    const targetRefs: Array<[string, string]> = [];
    config.fieldMapping.rules.forEach((rule, index) => {
      for (const id of rule.sourceFieldIds ?? [rule.sourceFieldId]) {
        sourceRefs.push([`${key}.fieldMapping.rules[${index}].sourceFieldId`, id]);
      }
      for (const id of formulaSourceFieldIds(rule)) {
        sourceRefs.push([`${key}.fieldMapping.rules[${index}].formula`, id]);
      }
      for (const id of rule.targetFieldIds ?? [rule.targetFieldId]) {
        targetRefs.push([`${key}.fieldMapping.rules[${index}].targetFieldId`, id]);
      }
    });
    sourceRefs.push(...filterFieldRefs(config.sourceFilter, `${key}.sourceFilter`));
    const details = [
      ...unknownFieldDetails(sourceRefs, new Set(source.map((field) => field.id)), 'the source'),
      ...unknownFieldDetails(targetRefs, target, 'the target'),
      // Operands that cannot fit the field they test, as for share scopes and receiver filters.
      ...filterOperandDetails(config.sourceFilter, `${key}.sourceFilter`, source),
    ];
    if (details.length > 0) {
      throw AppException.validation(details);
    }
  }
}
