import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import {
  commentsAllowed,
  permissionListAdmits,
  permissionListSubjects,
  type PermissionSubjects,
  type SettingsAction,
} from '../domain/document-settings.js';
import { type TypeScope, TypeSettingsRepository } from '../repositories/type-settings.repository.js';
import type { DocumentRecord } from '../domain/document.records.js';
import type { DocumentContext, DocumentRights } from './document-access.service.js';
import { isPlainObject } from '../fields/field-value.utils.js';

/**
 * Enforces document settings (docs/settings.md) on top of the caller's role: the document's `permissions.*` and its
 * type's `permissions.*` (type-level settings of its workspace, or organization level) both have to admit the caller.
 * They only narrow. Other modules call assertCanComment / assertMay for actions the access guard does not see.
 */
@Injectable()
export class DocumentSettingsPolicy {
  constructor(private readonly typeSettings: TypeSettingsRepository) {}

  async admits(ctx: DocumentContext, action: SettingsAction): Promise<boolean> {
    return this.admitsUser(ctx.document, ctx.access, ctx.principal.userId, action);
  }

  /** The same for any user with `rights` on the document (approvers, mentioned users: DocumentAccessService.mayView). */
  async admitsUser(document: DocumentRecord, rights: DocumentRights, userId: string, action: SettingsAction): Promise<boolean> {
    if (!permissionListAdmits(document.settings.permissions?.[action], rights, userId)) {
      return false;
    }
    if (rights.canManage) {
      return true;
    }
    const type = await this.typeSettings.cached({ organizationId: document.organizationId, workspaceId: document.workspaceId }, document.docType);
    const typePermissions = type?.permissions;
    return permissionListAdmits(isPlainObject(typePermissions) ? typePermissions[action] : undefined, rights, userId);
  }

  /**
   * admitsUser for every document of a type in one scope at once (lists that filter in SQL, settings-sql.ts): `all`
   * when no list narrows the caller (managers), `none` when the type's list shuts them out, else the subjects each
   * document's own list must hold.
   */
  async typeNarrowing(scope: TypeScope, docType: string, rights: DocumentRights, userId: string, action: SettingsAction): Promise<'all' | 'none' | PermissionSubjects> {
    const subjects = permissionListSubjects(rights, userId);
    if (subjects === null) {
      return 'all';
    }
    const typePermissions = (await this.typeSettings.cached(scope, docType))?.permissions;
    return permissionListAdmits(isPlainObject(typePermissions) ? typePermissions[action] : undefined, rights, userId) ? subjects : 'none';
  }

  /** FORBIDDEN unless the settings admit the caller for `action` (view, edit, delete, share). */
  async assertMay(ctx: DocumentContext, action: SettingsAction): Promise<void> {
    await this.assertUserMay(ctx.document, ctx.access, ctx.principal.userId, action);
  }

  /** The same for any user with `rights` on the document (DocumentAccessService.assertMayRead). */
  async assertUserMay(document: DocumentRecord, rights: DocumentRights, userId: string, action: SettingsAction): Promise<void> {
    if (!(await this.admitsUser(document, rights, userId, action))) {
      throw AppException.forbidden(`the document's permissions settings do not allow you to ${action} it`);
    }
  }

  /**
   * Type-level `sharing.allowDataSourceReferences: false` in the source workspace refuses serving the type to other
   * workspaces through data-source references (FORBIDDEN when such a reference is used).
   */
  async assertReferencesAllowed(source: TypeScope, docType: string): Promise<void> {
    const record = await this.typeSettings.cached(source, docType);
    if (record?.sharing.allowDataSourceReferences === false) {
      throw AppException.forbidden('the source workspace does not share this document type through data-source references');
    }
  }

  /** New comments: FORBIDDEN when `permissions.allowComment` is false (for everyone, managers included). */
  assertCanComment(ctx: DocumentContext): void {
    if (!commentsAllowed(ctx.document.settings)) {
      throw AppException.forbidden('comments are turned off for this document (permissions.allowComment is false)');
    }
  }
}
