import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { isUuid } from '../../tenancy/policies/organization-roles.js';
import { isPlainObject } from '../fields/field-value.utils.js';
import type { DocumentSettings } from './document.records.js';

/**
 * Document settings (spec 2.11) and what they mean on the server (docs/settings.md). Pure logic: validation of
 * the settings body and of type-level settings, and the permission narrowing rule.
 */

/** What `permissions.*` narrows: reading, writing, deleting, sharing one document. */
export const SETTINGS_ACTIONS = ['view', 'edit', 'delete', 'share'] as const;
export type SettingsAction = (typeof SETTINGS_ACTIONS)[number];

/** Role subjects, from the caller's rights on the document: manage → owner, write → editor, read → viewer. */
export const ROLE_SUBJECTS = ['role:owner', 'role:editor', 'role:viewer'] as const;
/** A workspace role as a subject: `role:editor`, or the bare role name `editor`. */
const ROLE_RANK: Record<string, number> = { 'role:viewer': 1, 'role:editor': 2, 'role:owner': 3, viewer: 1, editor: 2, owner: 3, '*': 1 };

/** `user:<id>`, another way to write a user id subject. */
const USER_PREFIX = 'user:';

/** The user id a subject names (`<uuid>` or `user:<uuid>`), else null. */
function subjectUserId(subject: unknown): string | null {
  if (typeof subject !== 'string') {
    return null;
  }
  const id = subject.startsWith(USER_PREFIX) ? subject.slice(USER_PREFIX.length) : subject;
  return isUuid(id) ? id.toLowerCase() : null;
}

export const NOTIFICATION_KEYS = ['onCommentAdd', 'onDataChange', 'onMerge', 'emailOnChange'] as const;
export type NotificationKey = (typeof NOTIFICATION_KEYS)[number];

const PERMISSION_BOOLEANS = ['allowComment', 'requireApproval'] as const;
const WORKFLOW_KEYS = ['requiresApproval', 'approvers', 'autoMerge'] as const;
const SETTINGS_SECTIONS = ['permissions', 'notifications', 'workflow'] as const;
const MAX_SUBJECTS = 500;

/** The rights the narrowing rule needs (a subset of DocumentRights). */
export interface NarrowingRights {
  canRead: boolean;
  canWrite: boolean;
  canManage: boolean;
}

function unknownKeys(section: Record<string, unknown>, known: readonly string[], path: string, details: ErrorDetail[]): void {
  for (const key of Object.keys(section)) {
    if (!known.includes(key)) {
      details.push({ field: `${path}.${key}`, reason: `unknown key; expected ${known.join(', ')}` });
    }
  }
}

function booleanAt(section: Record<string, unknown>, key: string, path: string, details: ErrorDetail[]): void {
  if (section[key] !== undefined && typeof section[key] !== 'boolean') {
    details.push({ field: `${path}.${key}`, reason: 'must be a boolean' });
  }
}

function subjectsAt(section: Record<string, unknown>, key: string, path: string, details: ErrorDetail[], usersOnly = false): void {
  const list = section[key];
  if (list === undefined) {
    return;
  }
  const what = usersOnly ? 'user ids' : `subjects (user ids, user:<id>, ${ROLE_SUBJECTS.join(', ')} or * for every reader)`;
  if (!Array.isArray(list) || list.length > MAX_SUBJECTS) {
    details.push({ field: `${path}.${key}`, reason: `must be an array of at most ${MAX_SUBJECTS} ${what}` });
    return;
  }
  const seen = new Set<string>();
  list.forEach((item: unknown, index) => {
    const ok = isUuid(item) || (!usersOnly && (subjectUserId(item) !== null || (typeof item === 'string' && ROLE_RANK[item] !== undefined)));
    if (!ok) {
      details.push({ field: `${path}.${key}[${index}]`, reason: `must be one of ${what}` });
    } else if (usersOnly && seen.has(String(item).toLowerCase())) {
      // A user list is an order of people (approvers decide one after the other): the same person twice is a mistake.
      details.push({ field: `${path}.${key}[${index}]`, reason: 'is listed twice' });
    }
    seen.add(String(item).toLowerCase());
  });
}

/**
 * `permissions` of document settings and of type-level settings: the four subject lists and two booleans, the keys
 * the service enforces, must be well-formed. Other keys are kept as given and not enforced: spec 2.11 leaves the
 * set open ("other keys such as `allowComment`, `requireApproval` also appear").
 */
export function validatePermissions(input: unknown, path: string, details: ErrorDetail[], booleans = true): void {
  if (input === undefined || input === null) {
    return;
  }
  if (!isPlainObject(input)) {
    details.push({ field: path, reason: `${path} must be an object` });
    return;
  }
  SETTINGS_ACTIONS.forEach((action) => subjectsAt(input, action, path, details));
  if (booleans) {
    PERMISSION_BOOLEANS.forEach((key) => booleanAt(input, key, path, details));
  }
}

/**
 * Validates document settings (VALIDATION_ERROR listing every problem). Known keys only inside `notifications` and
 * `workflow`, so a misspelt key is refused rather than silently not enforced; `permissions` is open (see
 * validatePermissions). `permissions.requireApproval` is the same switch
 * as `workflow.requiresApproval`: given alone it is copied there (where the merge reads it); both given must agree.
 */
export function validateDocumentSettings(input: unknown): DocumentSettings {
  if (!isPlainObject(input)) {
    throw AppException.validation([{ field: 'settings', reason: 'settings must be an object' }]);
  }
  const details: ErrorDetail[] = [];
  // The sections of spec 2.11 and nothing else, as PUT /settings (whitelisted DTO) refuses: a settings-update change of
  // POST /requests and the settings of POST /doc reach only this check and used to store any other key.
  for (const key of Object.keys(input)) {
    if (!SETTINGS_SECTIONS.includes(key as (typeof SETTINGS_SECTIONS)[number])) {
      details.push({ field: key, reason: `unknown key; expected ${SETTINGS_SECTIONS.join(', ')}` });
    }
  }
  for (const section of SETTINGS_SECTIONS) {
    const value = input[section];
    if (value !== undefined && value !== null && !isPlainObject(value)) {
      details.push({ field: section, reason: `${section} must be an object` });
    }
  }
  validatePermissions(input.permissions, 'permissions', details);
  if (isPlainObject(input.notifications)) {
    unknownKeys(input.notifications, NOTIFICATION_KEYS, 'notifications', details);
    NOTIFICATION_KEYS.forEach((key) => booleanAt(input.notifications as Record<string, unknown>, key, 'notifications', details));
  }
  const workflow = isPlainObject(input.workflow) ? input.workflow : null;
  if (workflow) {
    unknownKeys(workflow, WORKFLOW_KEYS, 'workflow', details);
    booleanAt(workflow, 'requiresApproval', 'workflow', details);
    booleanAt(workflow, 'autoMerge', 'workflow', details);
    subjectsAt(workflow, 'approvers', 'workflow', details, true);
  }
  const permissions = isPlainObject(input.permissions) ? input.permissions : null;
  const alias = permissions?.requireApproval;
  if (typeof alias === 'boolean' && typeof workflow?.requiresApproval === 'boolean' && alias !== workflow.requiresApproval) {
    details.push({ field: 'permissions.requireApproval', reason: 'must agree with workflow.requiresApproval' });
  }
  if (details.length > 0) {
    throw AppException.validation(details);
  }
  const settings = JSON.parse(JSON.stringify(input)) as DocumentSettings;
  if (typeof alias === 'boolean' && workflow?.requiresApproval === undefined) {
    settings.workflow = { ...(settings.workflow ?? {}), requiresApproval: alias };
  }
  return settings;
}

function roleRank(rights: NarrowingRights): number {
  return rights.canManage ? 3 : rights.canWrite ? 2 : rights.canRead ? 1 : 0;
}

/**
 * Whether a permission list admits the caller. Lists only narrow: the caller's own rights were checked before.
 * Absent list → no narrowing. Holders of manage rights (workspace owner, organization owner/admin) are never
 * narrowed, so the people who can change the settings can always repair them. Otherwise the caller must be named
 * by id (`<uuid>` or `user:<uuid>`), or hold at least the named role (`role:editor` admits editors; `*` every
 * reader; an empty list admits managers only).
 */
export function permissionListAdmits(list: unknown, rights: NarrowingRights, userId: string): boolean {
  if (!Array.isArray(list) || rights.canManage) {
    return true;
  }
  const rank = roleRank(rights);
  const caller = userId.toLowerCase();
  return list.some(
    (subject: unknown) =>
      subjectUserId(subject) === caller || (typeof subject === 'string' && ROLE_RANK[subject] !== undefined && rank >= (ROLE_RANK[subject] ?? 4)),
  );
}

/** What a permission list has to hold to admit a caller who is not a manager (permissionListSubjects). */
export interface PermissionSubjects {
  /** The role subjects the caller's rights reach (`role:viewer`, `viewer`, `*` for a reader…). */
  roles: string[];
  /** The caller's id, lower case: `<uuid>` and `user:<uuid>` name them. */
  userId: string;
}

/**
 * permissionListAdmits taken apart, for lists of documents that evaluate each document's list in SQL
 * (settings-sql.ts): null when no list narrows the caller (managers), else the subjects one of which a list must hold.
 */
export function permissionListSubjects(rights: NarrowingRights, userId: string): PermissionSubjects | null {
  if (rights.canManage) {
    return null;
  }
  const rank = roleRank(rights);
  return { roles: Object.keys(ROLE_RANK).filter((subject) => rank >= (ROLE_RANK[subject] ?? 4)), userId: userId.toLowerCase() };
}

/** Comments are refused only when `permissions.allowComment` is exactly false. */
export function commentsAllowed(settings: DocumentSettings): boolean {
  return settings.permissions?.allowComment !== false;
}

/** Whether a notifications switch is on (off unless exactly true). */
export function notificationOn(settings: DocumentSettings, key: NotificationKey): boolean {
  return settings.notifications?.[key] === true;
}
