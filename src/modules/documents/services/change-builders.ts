import { randomUUID } from 'node:crypto';
import { AppException } from '../../../common/errors/app.exception.js';
import { decimalIntegerOf } from '../../../common/http/pagination.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import type { RowValuesInput } from '../fields/field-type.registry.js';
import { parseRowValues } from '../fields/field-type.registry.js';
import { validateFieldDefinitions } from '../fields/field-definition.validator.js';
import { checkComputedDefinitions, checkDependents } from '../fields/computed-definitions.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { isPlainObject } from '../fields/field-value.utils.js';
import { checkVolatileFormulas } from '../query/volatile-formula-fields.js';
import {
  type ChangeDraft,
  type ChangeOrigin,
  type DocumentSettings,
  METADATA_TARGET,
  PROPERTIES_TARGET,
  SETTINGS_TARGET,
} from '../domain/document.records.js';
import { validateDocumentSettings } from '../domain/document-settings.js';
import { canonicalJson, diffFields } from '../domain/metadata-diff.js';
import type { DraftRowState, DraftScope } from './draft-scope.js';
import { CLIENT_ID_PATTERN, CLIENT_ID_RULE } from '../../../common/http/client-ids.js';

export const ROW_ID_PATTERN = CLIENT_ID_PATTERN;

export function versionConflict(currentVersion: number, yourVersion: number): AppException {
  return new AppException(ErrorCode.VERSION_CONFLICT, {
    payload: { currentVersion, yourVersion },
    details: [{ field: 'version', reason: `the current version is ${currentVersion}, not ${yourVersion}` }],
  });
}

export function rowNotFound(rowId: string): AppException {
  return new AppException(ErrorCode.NOT_FOUND, { details: [{ field: 'rowId', reason: `row ${rowId} not found` }] });
}

/** Validates one row creation against the draft and records it on the scope. */
export async function buildRowCreate(scope: DraftScope, input: { id?: string; values?: RowValuesInput }, origin?: ChangeOrigin): Promise<ChangeDraft> {
  const rowId = input.id ?? randomUUID();
  if (!ROW_ID_PATTERN.test(rowId)) {
    throw AppException.validation([{ field: 'id', reason: `row id ${CLIENT_ID_RULE}` }]);
  }
  const metadata = await scope.metadata();
  const values = parseRowValues(input.values ?? [], metadata.fields, { partial: false, document: scope.document });
  const state = (await scope.rows([rowId])).get(rowId);
  if (state?.exists) {
    throw new AppException(ErrorCode.ALREADY_EXISTS, { details: [{ field: 'id', reason: `row ${rowId} already exists` }] });
  }
  await scope.checkUnique(metadata.fields, [{ rowId, values }]);
  const change: ChangeDraft = { type: 'row-create', operation: 'create', targetId: rowId, data: origin ? { values, origin } : { values } };
  scope.push(change);
  return change;
}

/**
 * Whether a row change sent with `version` re-bases the row in its request: the request changes the row on top of an
 * older version and `version` is the row's committed one, the `currentVersion` a `row-changed` conflict reports
 * (docs/documents.md, "Merge"). Any other version is checked against the draft's as usual.
 */
function rebases(state: DraftRowState | undefined, version: number | undefined): boolean {
  return version !== undefined && state !== undefined && state.rebaseVersion === version;
}

/** Validates a partial row update (`null` clears a field) and the optimistic-lock `version`. */
export async function buildRowUpdate(
  scope: DraftScope,
  rowId: string,
  input: { values: RowValuesInput; version?: number },
  origin?: ChangeOrigin,
): Promise<ChangeDraft> {
  const state = (await scope.rows([rowId])).get(rowId);
  if (!state?.exists) {
    throw rowNotFound(rowId);
  }
  const rebase = rebases(state, input.version);
  if (input.version !== undefined && input.version !== state.version && !rebase) {
    throw versionConflict(state.version, input.version);
  }
  const metadata = await scope.metadata();
  const values = parseRowValues(input.values, metadata.fields, { partial: true, document: scope.document });
  await scope.checkUnique(metadata.fields, [{ rowId, values }]);
  const change: ChangeDraft = {
    type: 'row-update',
    operation: 'update',
    targetId: rowId,
    data: { values, baseVersion: state.baseVersion, ...(rebase ? { rebase: true as const } : {}), ...(origin ? { origin } : {}) },
  };
  scope.push(change);
  return change;
}

/**
 * A row delete; `version` is the optimistic lock. A row the request already deletes is gone from the draft, so a
 * delete of it is NOT_FOUND — unless it re-bases that delete (`version` = the committed version, see `rebases`).
 */
export async function buildRowDelete(scope: DraftScope, rowId: string, version?: number, origin?: ChangeOrigin): Promise<ChangeDraft> {
  const state = (await scope.rows([rowId], { deleting: [rowId] })).get(rowId);
  const rebase = rebases(state, version);
  if (!state || (!state.exists && !rebase)) {
    throw rowNotFound(rowId);
  }
  if (version !== undefined && version !== state.version && !rebase) {
    throw versionConflict(state.version, version);
  }
  const change: ChangeDraft = {
    type: 'row-delete',
    operation: 'delete',
    targetId: rowId,
    data: { baseVersion: state.baseVersion, ...(rebase ? { rebase: true as const } : {}), ...(origin ? { origin } : {}) },
  };
  scope.push(change);
  return change;
}

export type PropertiesWriteMode = 'create' | 'replace' | 'patch';

/**
 * Document property values: `create` and `replace` give the complete set (required properties enforced,
 * defaults applied on create), `patch` changes only the named ones (`null` clears). `version` is checked
 * against the properties' current version (VERSION_CONFLICT), or re-bases properties in conflict (as `rebases` rows).
 */
export async function buildPropertiesWrite(
  scope: DraftScope,
  input: RowValuesInput,
  mode: PropertiesWriteMode,
  version?: number,
  origin?: ChangeOrigin,
): Promise<ChangeDraft> {
  const current = await scope.properties();
  const rebase = version !== undefined && current.rebaseVersion === version;
  if (version !== undefined && version !== current.version && !rebase) {
    throw versionConflict(current.version, version);
  }
  const metadata = await scope.metadata();
  const partial = mode === 'patch';
  const values = parseRowValues(input, metadata.properties, { partial, applyDefaults: mode === 'create', document: scope.document });
  const change: ChangeDraft = {
    type: 'property-update',
    operation: mode === 'create' ? 'create' : 'update',
    targetId: PROPERTIES_TARGET,
    data: { values, replace: !partial, baseVersion: current.baseVersion, ...(rebase ? { rebase: true as const } : {}), ...(origin ? { origin } : {}) },
  } as ChangeDraft;
  scope.push(change);
  return change;
}

export async function buildPropertiesDelete(scope: DraftScope, version?: number): Promise<ChangeDraft> {
  const current = await scope.properties();
  const rebase = version !== undefined && current.rebaseVersion === version;
  if (version !== undefined && version !== current.version && !rebase) {
    throw versionConflict(current.version, version);
  }
  const change: ChangeDraft = {
    type: 'property-delete',
    operation: 'delete',
    targetId: PROPERTIES_TARGET,
    data: { baseVersion: current.baseVersion, ...(rebase ? { rebase: true as const } : {}) },
  };
  scope.push(change);
  return change;
}

/** The keys a metadata body has (spec 2.5, and the `version` GET answers); `at`: where it sits in the body. */
const METADATA_KEYS: ReadonlySet<string> = new Set(['fields', 'properties', 'version']);

/**
 * Refuses any other key, as PUT /metadata (a whitelisted DTO) does: a metadata-update change and the `metadata` of
 * POST /doc reach only this check, and a misspelt `propertys` used to be ignored without a word.
 */
export function assertMetadataKeys(input: unknown, at = ''): void {
  if (!isPlainObject(input)) {
    return;
  }
  const unknown = Object.keys(input).filter((key) => !METADATA_KEYS.has(key));
  if (unknown.length > 0) {
    throw AppException.validation(unknown.map((key) => ({ field: `${at}${key}`, reason: 'unknown key; expected fields, properties, version' })));
  }
}

/**
 * The optimistic lock of a metadata-update change naming `version` (GET /metadata answers it), checked as PUT
 * /metadata checks it: the merged version, plus one when the request being built already changes the metadata.
 */
export async function assertMetadataVersion(scope: DraftScope, sent: unknown): Promise<boolean> {
  if (sent === undefined || sent === null) {
    return false;
  }
  const version = decimalIntegerOf(sent);
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) {
    throw AppException.validation([{ field: 'newValue.version', reason: 'version must be a non-negative integer' }]);
  }
  return checkMetadataVersion(scope, version);
}

/**
 * A metadata `version` against the one GET /metadata shows this writer (VERSION_CONFLICT), or re-basing metadata in
 * conflict (as `rebases` rows; docs/documents.md): true when it re-bases.
 */
export async function checkMetadataVersion(scope: DraftScope, version: number): Promise<boolean> {
  const { version: current, rebaseVersion } = await scope.metadataVersions();
  if (version === rebaseVersion) {
    return true;
  }
  if (version !== current) {
    throw versionConflict(current, version);
  }
  return false;
}

/**
 * A complete new metadata (`fields` required, `properties` optional — kept when omitted). Returns null when it
 * equals the metadata in force, unless it re-bases the request's metadata (`rebase`, see checkMetadataVersion).
 * Refuses making a field unique while existing rows share a value.
 */
export async function buildMetadataUpdate(
  scope: DraftScope,
  input: { fields?: unknown; properties?: unknown },
  uniqueDuplicates: (fieldId: string) => Promise<boolean>,
  // Where `fields` and `properties` sit in the body, for error paths (`metadata.` in a document create).
  at = '',
  rebase = false,
): Promise<ChangeDraft | null> {
  const paths = { fields: `${at}fields`, properties: `${at}properties` };
  assertMetadataKeys(input, at);
  if (input.fields === undefined || input.fields === null) {
    throw AppException.validation([{ field: paths.fields, reason: 'fields is required' }]);
  }
  const current = await scope.metadata();
  // Formulas, lookups and rollups naming a field being deleted or retyped are named first (docs/formulas.md).
  checkDependents(current.fields, rawDefinitions(input.fields), paths.fields);
  const written = validateFieldDefinitions(input.fields, paths.fields);
  const writtenProperties = input.properties === undefined || input.properties === null ? current.properties : validateFieldDefinitions(input.properties, paths.properties);
  checkDependents(current.properties, writtenProperties, paths.properties);
  const { fields, properties } = checkComputedDefinitions(written, writtenProperties, paths);
  checkVolatileFormulas(fields, paths.fields);
  if (!rebase && canonicalJson({ fields, properties }) === canonicalJson({ fields: current.fields, properties: current.properties })) {
    return null;
  }
  for (const update of diffFields(current.fields, fields).updated) {
    if (update.becameUnique && !update.convert && (await uniqueDuplicates(update.after.id))) {
      throw AppException.validation([{ fieldId: update.after.id, field: paths.fields, reason: 'existing rows share values of this field; it cannot be made unique' }]);
    }
  }
  const change: ChangeDraft = {
    type: 'metadata-update',
    operation: 'update',
    targetId: METADATA_TARGET,
    data: { fields, properties, baseMetadataVersion: scope.document.metadataVersion, ...(rebase ? { rebase: true as const } : {}) },
  };
  scope.push(change);
  return change;
}

/** The well-formed entries of a definitions array, before full validation. */
function rawDefinitions(input: unknown): FieldDefinition[] {
  return Array.isArray(input) ? (input.filter((item) => isPlainObject(item) && typeof item.id === 'string' && typeof item.type === 'string') as FieldDefinition[]) : [];
}

/** Document settings (spec 2.11), validated per docs/settings.md (domain/document-settings.ts). */
export function parseSettings(input: unknown): DocumentSettings {
  return validateDocumentSettings(input);
}

export function buildSettingsUpdate(scope: DraftScope, settings: DocumentSettings): ChangeDraft | null {
  if (canonicalJson(settings) === canonicalJson(scope.document.settings)) {
    return null;
  }
  const change: ChangeDraft = { type: 'settings-update', operation: 'update', targetId: SETTINGS_TARGET, data: { settings } };
  scope.push(change);
  return change;
}
