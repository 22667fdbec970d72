import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { offsetOf, type Page, pageOf, type PageQueryDto } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import {
  type CreateDataSourceReferenceDto,
  DataSourceReferenceResponseDto,
  type UpdateDataSourceReferenceDto,
  type WorkspaceDataSourceReferenceItemDto,
} from '../dtos/data-source-reference.dto.js';
import { DataSourceReferenceEntity } from '../entities/data-source-reference.entity.js';
import { isUuid } from '../policies/organization-roles.js';
import { type WorkspaceAccess, WorkspaceAccessService } from './workspace-access.service.js';
import { sameUuid } from '../../../common/uuids.js';

/**
 * Data-source references (spec 2.3, 3, 4.3; replacement mode). Records are visible to whoever may read the
 * workspace (they are part of the workspace record); changes need workspace owner or organization
 * owner/admin on a workspace that is not archived. Adding or enabling one also needs read permission on the
 * source workspace. DocumentSourceService applies them.
 */
@Injectable()
export class DataSourceReferencesService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: WorkspaceAccessService,
  ) {}

  async list(principal: Principal, organizationId: string, workspaceId: string, query: PageQueryDto): Promise<Page<DataSourceReferenceResponseDto>> {
    await this.access.requireIn(principal.userId, organizationId, workspaceId, 'read');
    const [rows, total] = await this.tx.manager.findAndCount(DataSourceReferenceEntity, {
      where: { workspaceId },
      order: { createdAt: 'ASC', docType: 'ASC', id: 'ASC' },
      take: query.pageSize,
      skip: offsetOf(query),
    });
    return pageOf(rows.map((r) => DataSourceReferenceResponseDto.from(r)), total, query);
  }

  async get(principal: Principal, organizationId: string, workspaceId: string, refId: string): Promise<DataSourceReferenceResponseDto> {
    await this.access.requireIn(principal.userId, organizationId, workspaceId, 'manage');
    return DataSourceReferenceResponseDto.from(await this.find(workspaceId, refId));
  }

  async create(principal: Principal, organizationId: string, workspaceId: string, dto: CreateDataSourceReferenceDto): Promise<DataSourceReferenceResponseDto> {
    return this.tx.run(async () => {
      const access = await this.access.requireIn(principal.userId, organizationId, workspaceId, 'manage');
      if (dto.force && !access.isOrganizationAdmin) {
        throw AppException.forbidden('only organization owners and admins may force a data-source reference');
      }
      await this.requireReadableSource(principal, access, dto.sourceWorkspaceId);
      await this.serialize(access.workspaceId);
      const same = await this.tx.manager.findOne(DataSourceReferenceEntity, {
        where: { workspaceId, docType: dto.docType, sourceWorkspaceId: dto.sourceWorkspaceId },
      });
      if (same) {
        throw duplicate('this workspace already references that source for this document type', same.id);
      }
      const status = dto.status ?? 'active';
      if (status === 'active') {
        const active = await this.activeFor(workspaceId, dto.docType);
        if (active && !dto.force) {
          throw duplicate('another active reference already replaces this document type; pause it first', active.id);
        }
        if (active) {
          await this.setStatus(active.id, 'inactive', principal.userId);
        }
      }
      const ref = this.tx.manager.create(DataSourceReferenceEntity, {
        organizationId: access.organizationId,
        workspaceId,
        sourceWorkspaceId: dto.sourceWorkspaceId,
        docType: dto.docType,
        status,
        createdBy: principal.userId,
      });
      await this.tx.manager.save(ref);
      return DataSourceReferenceResponseDto.from(ref);
    });
  }

  /** Pause (`inactive`) or enable (`active`). */
  async update(
    principal: Principal,
    organizationId: string,
    workspaceId: string,
    refId: string,
    dto: UpdateDataSourceReferenceDto,
  ): Promise<DataSourceReferenceResponseDto> {
    return this.tx.run(async () => {
      const access = await this.access.requireIn(principal.userId, organizationId, workspaceId, 'manage');
      await this.serialize(access.workspaceId);
      const ref = await this.find(workspaceId, refId, true);
      requireOwnIdentity(dto, ref);
      if (dto.status !== ref.status) {
        if (dto.status === 'active') {
          await this.requireReadableSource(principal, access, ref.sourceWorkspaceId);
          const active = await this.activeFor(workspaceId, ref.docType);
          if (active) {
            throw duplicate('another active reference already replaces this document type; pause it first', active.id);
          }
        }
        await this.setStatus(ref.id, dto.status, principal.userId);
      }
      return DataSourceReferenceResponseDto.from(await this.find(workspaceId, refId));
    });
  }

  async remove(principal: Principal, organizationId: string, workspaceId: string, refId: string): Promise<null> {
    return this.tx.run(async () => {
      await this.access.requireIn(principal.userId, organizationId, workspaceId, 'manage');
      const ref = await this.find(workspaceId, refId, true);
      await this.tx.manager.delete(DataSourceReferenceEntity, { id: ref.id });
      return null;
    });
  }

  /**
   * A workspace's `dataSourceReferences` written as a whole (workspace create and PATCH): pairs
   * (sourceWorkspaceId, docType) not listed are removed, listed ones are created or get the given status.
   * The caller already holds manage access to the workspace; the same source rules apply as for create.
   *
   * Items may be references as read. The pair is what identifies a reference in the set, so an item read from
   * this workspace keeps its reference (same id, creator and creation time). An `id` is only looked up among this
   * workspace's references: naming one, it must come with that reference's pair (a reference never changes its
   * source or type — such an edit would otherwise silently become "remove that one, add another"); naming none
   * (another workspace's reference, a deleted one, anything else) it is ignored, so another workspace's
   * reference can never be touched or probed through it.
   */
  async replaceAll(principal: Principal, access: WorkspaceAccess, items: WorkspaceDataSourceReferenceItemDto[]): Promise<void> {
    const key = (source: string, docType: string): string => `${source}\u0000${docType}`;
    const activeTypes = new Set<string>();
    const wanted = new Map<string, WorkspaceDataSourceReferenceItemDto>();
    items.forEach((item, index) => {
      const k = key(item.sourceWorkspaceId, item.docType);
      if (wanted.has(k)) {
        throw AppException.validation([{ field: `dataSourceReferences[${index}]`, reason: 'the same source and document type are listed twice' }]);
      }
      if ((item.status ?? 'active') === 'active') {
        if (activeTypes.has(item.docType)) {
          throw AppException.validation([
            { field: `dataSourceReferences[${index}].docType`, reason: 'only one active reference per document type' },
          ]);
        }
        activeTypes.add(item.docType);
      }
      wanted.set(k, item);
    });
    await this.serialize(access.workspaceId);
    const existing = await this.tx.manager.find(DataSourceReferenceEntity, { where: { workspaceId: access.workspaceId }, lock: { mode: 'pessimistic_write' } });
    const existingByKey = new Map(existing.map((r) => [key(r.sourceWorkspaceId, r.docType), r]));
    const existingById = new Map(existing.map((r) => [r.id, r]));
    items.forEach((item, index) => {
      const named = typeof item.id === 'string' ? existingById.get(item.id.toLowerCase()) : undefined;
      if (named && key(named.sourceWorkspaceId, named.docType) !== key(item.sourceWorkspaceId, item.docType)) {
        throw AppException.validation([
          {
            field: `dataSourceReferences[${index}].id`,
            reason:
              'this reference has another sourceWorkspaceId or docType, which cannot change; leave out id to add a new reference',
          },
        ]);
      }
    });
    const removed = existing.filter((r) => !wanted.has(key(r.sourceWorkspaceId, r.docType)));
    if (removed.length > 0) {
      await this.tx.manager.delete(DataSourceReferenceEntity, { id: In(removed.map((r) => r.id)) });
    }
    // Pauses first, then activations and inserts, so "one active reference per type" holds after every statement.
    for (const item of wanted.values()) {
      const current = existingByKey.get(key(item.sourceWorkspaceId, item.docType));
      if (current && current.status === 'active' && item.status === 'inactive') {
        await this.setStatus(current.id, 'inactive', principal.userId);
      }
    }
    for (const item of wanted.values()) {
      const status = item.status ?? 'active';
      const current = existingByKey.get(key(item.sourceWorkspaceId, item.docType));
      if (current) {
        if (status === 'active' && current.status !== 'active') {
          await this.requireReadableSource(principal, access, item.sourceWorkspaceId);
          await this.setStatus(current.id, 'active', principal.userId);
        }
        continue;
      }
      await this.requireReadableSource(principal, access, item.sourceWorkspaceId);
      await this.tx.manager.insert(DataSourceReferenceEntity, {
        organizationId: access.organizationId,
        workspaceId: access.workspaceId,
        sourceWorkspaceId: item.sourceWorkspaceId,
        docType: item.docType,
        status,
        createdBy: principal.userId,
      });
    }
  }

  /** The references of several workspaces, for workspace records. */
  async listFor(workspaceIds: string[]): Promise<Map<string, DataSourceReferenceResponseDto[]>> {
    const result = new Map<string, DataSourceReferenceResponseDto[]>();
    if (workspaceIds.length === 0) {
      return result;
    }
    const rows = await this.tx.manager.find(DataSourceReferenceEntity, {
      where: { workspaceId: In(workspaceIds) },
      order: { createdAt: 'ASC', docType: 'ASC', id: 'ASC' },
    });
    for (const row of rows) {
      const list = result.get(row.workspaceId) ?? [];
      list.push(DataSourceReferenceResponseDto.from(row));
      result.set(row.workspaceId, list);
    }
    return result;
  }

  /** The source must be another workspace of the same organization that the caller may read. */
  private async requireReadableSource(principal: Principal, target: WorkspaceAccess, sourceWorkspaceId: string): Promise<void> {
    if (sameUuid(sourceWorkspaceId, target.workspaceId)) {
      throw AppException.validation([{ field: 'sourceWorkspaceId', reason: 'a workspace cannot reference itself' }]);
    }
    const source = isUuid(sourceWorkspaceId) ? await this.access.resolve(principal.userId, sourceWorkspaceId).catch(() => null) : null;
    if (!source || source.organizationId !== target.organizationId) {
      throw AppException.notFound('source workspace');
    }
    if (!source.canRead) {
      throw AppException.forbidden('read permission on the source workspace required');
    }
  }

  /**
   * Changes to one workspace's references run one after another (until commit), so the duplicate and "one active
   * per type" checks see what a concurrent change committed and answer ALREADY_EXISTS with its referenceId, rather
   * than the unique indexes refusing the second insert or enable without naming the reference.
   */
  private async serialize(workspaceId: string): Promise<void> {
    await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`data-source-references:${workspaceId}`]);
  }

  private async activeFor(workspaceId: string, docType: string): Promise<DataSourceReferenceEntity | null> {
    return this.tx.manager.findOne(DataSourceReferenceEntity, { where: { workspaceId, docType, status: 'active' } });
  }

  private async setStatus(id: string, status: DataSourceReferenceEntity['status'], userId: string): Promise<void> {
    await this.tx.manager.update(DataSourceReferenceEntity, { id }, { status, updatedBy: userId });
  }

  private async find(workspaceId: string, refId: string, lock = false): Promise<DataSourceReferenceEntity> {
    const ref = isUuid(refId)
      ? await this.tx.manager.findOne(DataSourceReferenceEntity, {
          where: { id: refId, workspaceId },
          ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
        })
      : null;
    if (!ref) {
      throw AppException.notFound('data-source reference');
    }
    return ref;
  }
}

/** A PATCH body that is the reference as read: its identity keys, when sent, must be this reference's. */
function requireOwnIdentity(dto: UpdateDataSourceReferenceDto, ref: DataSourceReferenceEntity): void {
  const problems: Array<{ field: string; reason: string }> = [];
  if (dto.id !== undefined && !sameUuid(dto.id, ref.id)) {
    problems.push({ field: 'id', reason: 'must be the id in the path' });
  }
  if (dto.sourceWorkspaceId !== undefined && !sameUuid(dto.sourceWorkspaceId, ref.sourceWorkspaceId)) {
    problems.push({ field: 'sourceWorkspaceId', reason: 'cannot change; add a new reference instead' });
  }
  if (dto.docType !== undefined && dto.docType !== ref.docType) {
    problems.push({ field: 'docType', reason: 'cannot change; add a new reference instead' });
  }
  if (problems.length > 0) {
    throw AppException.validation(problems);
  }
}

function duplicate(reason: string, referenceId: string): AppException {
  return new AppException(ErrorCode.ALREADY_EXISTS, { details: [{ field: 'docType', reason }], payload: { referenceId } });
}
