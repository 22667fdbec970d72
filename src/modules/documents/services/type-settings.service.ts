import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { validatePermissions } from '../domain/document-settings.js';
import type { DocumentRecord } from '../domain/document.records.js';
import type { TypeSettingsDto, TypeSettingsResponseDto } from '../dtos/type-settings.dto.js';
import { isPlainObject } from '../fields/field-value.utils.js';
import { type TypeScope, type TypeSettingsRecord, TypeSettingsRepository } from '../repositories/type-settings.repository.js';
import { DOC_TYPE_PATTERN, DocumentAccessService, type DocumentNeed, type DocumentScope, docNotFound, rightsOfWorkspace } from './document-access.service.js';
import { CLIENT_ID_PATTERN, CLIENT_ID_RULE, DOC_TYPE_RULE } from '../../../common/http/client-ids.js';

export const VIEW_ID_PATTERN = CLIENT_ID_PATTERN;
const MAX_RETENTION_DAYS = 36_500;

/**
 * Checks a type-level settings body (docs/settings.md); VALIDATION_ERROR listing every problem. Spec 2.11 gives
 * `sharing` and `retention` only as objects: the keys the service enforces must be well-formed, other keys are
 * kept as given, as in `permissions`.
 */
export function validateTypeSettings(body: TypeSettingsDto): void {
  const details: ErrorDetail[] = [];
  if (typeof body.defaultViewId === 'string' && !VIEW_ID_PATTERN.test(body.defaultViewId)) {
    details.push({ field: 'defaultViewId', reason: CLIENT_ID_RULE });
  }
  if (body.sharing?.allowDataSourceReferences !== undefined && typeof body.sharing.allowDataSourceReferences !== 'boolean') {
    details.push({ field: 'sharing.allowDataSourceReferences', reason: 'must be a boolean' });
  }
  // `permissions` may be any JSON (spec 2.11); as an object, the lists the service enforces must be well-formed.
  if (isPlainObject(body.permissions)) {
    validatePermissions(body.permissions, 'permissions', details, false);
  }
  const days = body.retention?.closedRequestsDays;
  if (days !== undefined && !(typeof days === 'number' && Number.isInteger(days) && days >= 1 && days <= MAX_RETENTION_DAYS)) {
    details.push({ field: 'retention.closedRequestsDays', reason: `must be an integer from 1 to ${MAX_RETENTION_DAYS}` });
  }
  if (details.length > 0) {
    throw AppException.validation(details);
  }
}

function toDto(scope: TypeScope, docType: string, record: TypeSettingsRecord | null): TypeSettingsResponseDto {
  return {
    docType,
    organizationId: scope.organizationId,
    workspaceId: scope.workspaceId,
    defaultViewId: record?.defaultViewId ?? null,
    sharing: record?.sharing ?? {},
    permissions: record?.permissions ?? {},
    retention: record?.retention ?? {},
    updatedAt: record ? record.updatedAt.toISOString() : null,
    updatedBy: record?.updatedBy ?? null,
  };
}

/**
 * Type-level settings (`GET/PUT /doc/{docType}/setting`, spec 2.11) per workspace context or per organization
 * (organization-level documents). Reading needs read rights in that context, writing manage rights.
 */
@Injectable()
export class TypeSettingsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly settings: TypeSettingsRepository,
    private readonly access: DocumentAccessService,
  ) {}

  async get(principal: Principal, docType: string, scope: DocumentScope): Promise<TypeSettingsResponseDto> {
    const target = await this.resolve(principal, docType, scope, 'read');
    return toDto(target, docType, await this.settings.find(target, docType));
  }

  async put(principal: Principal, docType: string, scope: DocumentScope, body: TypeSettingsDto): Promise<TypeSettingsResponseDto> {
    const target = await this.resolve(principal, docType, scope, 'manage');
    validateTypeSettings(body);
    const record = await this.tx.run(() =>
      this.settings.upsert(target, docType, {
        defaultViewId: body.defaultViewId ?? null,
        sharing: isPlainObject(body.sharing) ? body.sharing : {},
        permissions: body.permissions ?? {},
        retention: isPlainObject(body.retention) ? body.retention : {},
        updatedBy: principal.userId,
      }),
    );
    return toDto(target, docType, record);
  }

  /** The type-level default view id of a document's type in its scope (the fallback of the default view). */
  async defaultViewId(document: DocumentRecord): Promise<string | null> {
    const record = await this.settings.find({ organizationId: document.organizationId, workspaceId: document.workspaceId }, document.docType);
    return record?.defaultViewId ?? null;
  }

  private async resolve(principal: Principal, docType: string, scope: DocumentScope, need: DocumentNeed): Promise<TypeScope> {
    if (!DOC_TYPE_PATTERN.test(docType)) {
      throw AppException.validation([{ field: 'docType', reason: `docType ${DOC_TYPE_RULE}` }]);
    }
    scope = await this.access.typeScope(principal, scope);
    if (scope.workspaceId) {
      const access = await this.access.accessTo(principal, scope.workspaceId);
      if (scope.organizationId && scope.organizationId !== access.organizationId) {
        throw docNotFound();
      }
      this.access.check(rightsOfWorkspace(access), need, false);
      return { organizationId: access.organizationId, workspaceId: access.workspaceId };
    }
    if (scope.organizationId) {
      const rights = await this.access.organizationRights(principal, scope.organizationId);
      this.access.check(rights, need, false);
      return { organizationId: rights.organizationId, workspaceId: null };
    }
    throw AppException.validation([
      { field: 'workspaceId', reason: 'the caller has no default workspace: name the context, workspaceId (or the X-Workspace-Id header), or organizationId for organization-level documents' },
    ]);
  }
}
