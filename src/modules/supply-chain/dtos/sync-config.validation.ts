import { CronExpressionParser } from 'cron-parser';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import {
  ACCEPT_MODES,
  ACCESS_MODES,
  type AccessControl,
  type AcceptMode,
  CONNECTOR_CONFLICT_RESOLUTIONS,
  type ConflictResolution,
  type ConnectorConfig,
  type DefaultReceiverConfig,
  type FieldMapping,
  type FilterGroup,
  PROPAGATION_EVENT_TYPES,
  type PropagationEvents,
  type ReceiverFilter,
  type ShareScope,
  SYNC_MODES,
} from '../domain/supply-chain.types.js';
import { isPlainObject } from '../../documents/fields/field-value.utils.js';
import { parseFieldMapping } from './field-mapping.validation.js';
import { parseFilterGroup } from './filter-group.validation.js';
import { parseConflictResolution, parseReceiverFilter } from './receiver-config.validation.js';

/**
 * Validators of the supply-chain configuration objects (spec 2.14): filter groups, field mapping, receiver filter,
 * conflict resolution, share scope, access control, propagation events, default receiver config, connector config.
 * Each `parse*` takes the raw body value and the path it came from, and returns the normalized object (defaults
 * filled in) or throws VALIDATION_ERROR listing every problem as `{field, reason}`. Pure: no database. Filter groups
 * are parsed in filter-group.validation.ts, field mappings in field-mapping.validation.ts, receiver filters and
 * conflict resolution in receiver-config.validation.ts; field ids and operands are
 * checked against the documents' fields by the services, with sync-config-fields.validation.ts. Shared with the
 * propagation/connector module.
 */

const MAX_BATCH_WINDOW_SECONDS = 86_400;
export const DEFAULT_BATCH_WINDOW_SECONDS = 300;
const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function oneOf(values: readonly string[]): string {
  return `must be one of ${values.join(', ')}`;
}

/** Collects problems with their paths; `done()` throws them all at once. */
export class ConfigChecker {
  readonly errors: ErrorDetail[] = [];

  fail(field: string, reason: string): void {
    this.errors.push({ field, reason });
  }

  done(): void {
    if (this.errors.length > 0) {
      throw AppException.validation(this.errors);
    }
  }

  /**
   * Refuses the keys of `raw` that are not in `allowed`, each named by its path. A configuration key the parser does
   * not know would otherwise be dropped and its default — often the widest (all rows shared, any organization
   * admitted, auto-accept) — stored in its place, as the whitelist + forbid pipe refuses unknown top-level keys.
   */
  knownKeys(raw: Record<string, unknown>, allowed: readonly string[], path: string): void {
    for (const key of Object.keys(raw)) {
      if (!allowed.includes(key)) {
        this.fail(`${path}.${key}`, `${path}.${key} is not a known key; allowed: ${allowed.join(', ')}`);
      }
    }
  }

  enumValue<T extends string>(
    raw: unknown,
    allowed: readonly T[],
    path: string,
    fallback?: T,
  ): T | undefined {
    if (raw === undefined || raw === null) {
      if (fallback === undefined) {
        this.fail(path, `${path} is required; ${oneOf(allowed)}`);
      }
      return fallback;
    }
    if (typeof raw !== 'string' || !(allowed as readonly string[]).includes(raw)) {
      this.fail(path, `${path} ${oneOf(allowed)}`);
      return fallback;
    }
    return raw as T;
  }

  bool(raw: unknown, path: string, fallback: boolean): boolean {
    if (raw === undefined || raw === null) {
      return fallback;
    }
    if (typeof raw !== 'boolean') {
      this.fail(path, `${path} must be a boolean`);
      return fallback;
    }
    return raw;
  }

  id(raw: unknown, path: string): string | undefined {
    if (typeof raw !== 'string' || !ID.test(raw)) {
      this.fail(path, `${path} must be a field id (letters, digits, _ . : -, at most 128)`);
      return undefined;
    }
    return raw;
  }

  text(raw: unknown, path: string, max = 2000): string | undefined {
    if (raw === undefined || raw === null) {
      return undefined;
    }
    if (typeof raw !== 'string' || raw.length > max) {
      this.fail(path, `${path} must be a string of at most ${max} characters`);
      return undefined;
    }
    return raw;
  }

  positive(raw: unknown, path: string): number | undefined {
    if (raw === undefined || raw === null) {
      return undefined;
    }
    if (typeof raw !== 'number' || !Number.isFinite(raw) || raw <= 0) {
      this.fail(path, `${path} must be a positive number`);
      return undefined;
    }
    return raw;
  }

  /** `{operator: AND|OR, conditions[], groups[]}`; `logic` is accepted for `operator`, any case. */
  filterGroup(raw: unknown, path: string, depth = 1): FilterGroup | undefined {
    return parseFilterGroup(this, raw, path, depth);
  }

  /** `{rules[], unmappedFields}`; each rule with its transform settings (field-mapping.validation.ts). */
  fieldMapping(raw: unknown, path: string): FieldMapping | undefined {
    return parseFieldMapping(this, raw, path);
  }

  /** The receiver filter of a binding (receiver-config.validation.ts). */
  receiverFilter(raw: unknown, path: string): ReceiverFilter | undefined {
    return parseReceiverFilter(this, raw, path);
  }

  /** The conflict resolution of a binding (receiver-config.validation.ts). */
  conflictResolution(raw: unknown, path: string): ConflictResolution | undefined {
    return parseConflictResolution(this, raw, path);
  }

  shareScope(raw: unknown, path: string): ShareScope | undefined {
    if (raw === undefined || raw === null) {
      return { type: 'all' };
    }
    if (!isPlainObject(raw)) {
      this.fail(path, `${path} must be {type: all} or {mode: filter, filterGroup}`);
      return undefined;
    }
    this.knownKeys(raw, ['type', 'mode', 'filterGroup'], path);
    const kind = raw.type ?? raw.mode;
    if (kind === 'all') {
      return { type: 'all' };
    }
    if (kind === 'filter') {
      const filterGroup = this.filterGroup(raw.filterGroup, `${path}.filterGroup`);
      return filterGroup ? { type: 'filter', filterGroup } : undefined;
    }
    this.fail(`${path}.type`, `${path} must be {type: all} or {mode: filter, filterGroup}`);
    return undefined;
  }

  accessControl(raw: unknown, path: string): AccessControl | undefined {
    if (raw === undefined || raw === null) {
      return { mode: 'approval', allowedOrganizations: [] };
    }
    if (typeof raw === 'string') {
      const mode = this.enumValue(raw, ACCESS_MODES, path);
      if (mode === 'whitelist') {
        this.fail(path, 'whitelist needs the object form {mode: whitelist, allowedOrganizations}');
        return undefined;
      }
      return mode ? { mode, allowedOrganizations: [] } : undefined;
    }
    if (!isPlainObject(raw)) {
      this.fail(path, `${path} must be public, approval, or {mode, allowedOrganizations}`);
      return undefined;
    }
    this.knownKeys(raw, ['mode', 'allowedOrganizations'], path);
    const mode = this.enumValue(raw.mode, ACCESS_MODES, `${path}.mode`);
    const list = raw.allowedOrganizations ?? [];
    if (
      !Array.isArray(list) ||
      list.length > 1000 ||
      !list.every((id) => typeof id === 'string' && UUID.test(id))
    ) {
      this.fail(
        `${path}.allowedOrganizations`,
        'allowedOrganizations must be an array of organization ids (UUIDs)',
      );
      return undefined;
    }
    if (mode === 'whitelist' && list.length === 0) {
      this.fail(`${path}.allowedOrganizations`, 'whitelist needs at least one organization');
    }
    return mode
      ? { mode, allowedOrganizations: [...new Set((list as string[]).map((id) => id.toLowerCase()))] }
      : undefined;
  }

  propagationEvents(raw: unknown, path: string): PropagationEvents | undefined {
    if (raw === undefined || raw === null) {
      return {
        eventTypes: [...PROPAGATION_EVENT_TYPES],
        batchMerge: false,
        batchWindowSeconds: DEFAULT_BATCH_WINDOW_SECONDS,
      };
    }
    if (!isPlainObject(raw)) {
      this.fail(path, `${path} must be an object {eventTypes, batchMerge, batchWindowSeconds}`);
      return undefined;
    }
    this.knownKeys(raw, ['eventTypes', 'batchMerge', 'batchWindowSeconds'], path);
    let eventTypes = [...PROPAGATION_EVENT_TYPES];
    if (raw.eventTypes !== undefined) {
      if (!Array.isArray(raw.eventTypes) || raw.eventTypes.length === 0) {
        this.fail(
          `${path}.eventTypes`,
          `eventTypes must be a non-empty array; each ${oneOf(PROPAGATION_EVENT_TYPES)}`,
        );
      } else {
        const list = raw.eventTypes as unknown[];
        eventTypes = [
          ...new Set(
            list.map(
              (type, index) =>
                this.enumValue(type, PROPAGATION_EVENT_TYPES, `${path}.eventTypes[${index}]`) ??
                'row_created',
            ),
          ),
        ];
      }
    }
    const batchMerge = this.bool(raw.batchMerge, `${path}.batchMerge`, false);
    let batchWindowSeconds = DEFAULT_BATCH_WINDOW_SECONDS;
    if (raw.batchWindowSeconds !== undefined && raw.batchWindowSeconds !== null) {
      const value = raw.batchWindowSeconds;
      if (
        typeof value !== 'number' ||
        !Number.isInteger(value) ||
        value < 1 ||
        value > MAX_BATCH_WINDOW_SECONDS
      ) {
        this.fail(
          `${path}.batchWindowSeconds`,
          `batchWindowSeconds must be an integer from 1 to ${MAX_BATCH_WINDOW_SECONDS}`,
        );
      } else {
        batchWindowSeconds = value;
      }
    }
    return { eventTypes, batchMerge, batchWindowSeconds };
  }

  defaultReceiverConfig(raw: unknown, path: string): DefaultReceiverConfig | null {
    if (raw === undefined || raw === null) {
      return null;
    }
    if (!isPlainObject(raw)) {
      this.fail(path, `${path} must be an object {suggestedFieldMapping, suggestedAcceptMode}`);
      return null;
    }
    this.knownKeys(raw, ['suggestedFieldMapping', 'suggestedAcceptMode'], path);
    const result: DefaultReceiverConfig = {};
    if (raw.suggestedFieldMapping !== undefined && raw.suggestedFieldMapping !== null) {
      result.suggestedFieldMapping = this.fieldMapping(
        raw.suggestedFieldMapping,
        `${path}.suggestedFieldMapping`,
      );
    }
    if (raw.suggestedAcceptMode !== undefined && raw.suggestedAcceptMode !== null) {
      result.suggestedAcceptMode = this.enumValue<AcceptMode>(
        raw.suggestedAcceptMode,
        ACCEPT_MODES,
        `${path}.suggestedAcceptMode`,
      );
    }
    return result;
  }

  connectorConfig(raw: unknown, path: string): ConnectorConfig | undefined {
    if (!isPlainObject(raw)) {
      this.fail(
        path,
        `${path} is required: an object {fieldMapping, sourceFilter, syncMode, scheduleConfig, conflictResolution, bidirectional}`,
      );
      return undefined;
    }
    this.knownKeys(
      raw,
      ['fieldMapping', 'sourceFilter', 'syncMode', 'scheduleConfig', 'conflictResolution', 'bidirectional'],
      path,
    );
    if (isPlainObject(raw.conflictResolution)) {
      this.knownKeys(raw.conflictResolution, ['defaultStrategy'], `${path}.conflictResolution`);
    }
    const fieldMapping = this.fieldMapping(raw.fieldMapping, `${path}.fieldMapping`);
    const syncMode = this.enumValue(raw.syncMode, SYNC_MODES, `${path}.syncMode`, 'realtime') ?? 'realtime';
    const conflictResolution =
      this.enumValue(
        isPlainObject(raw.conflictResolution)
          ? raw.conflictResolution.defaultStrategy
          : raw.conflictResolution,
        CONNECTOR_CONFLICT_RESOLUTIONS,
        `${path}.conflictResolution`,
        'source_wins',
      ) ?? 'source_wins';
    const config: ConnectorConfig = {
      fieldMapping: fieldMapping ?? { rules: [], unmappedFields: 'ignore' },
      syncMode,
      conflictResolution,
      bidirectional: this.bool(raw.bidirectional, `${path}.bidirectional`, false),
    };
    if (raw.sourceFilter !== undefined && raw.sourceFilter !== null) {
      config.sourceFilter = this.filterGroup(raw.sourceFilter, `${path}.sourceFilter`);
    }
    if (syncMode === 'scheduled' || (raw.scheduleConfig !== undefined && raw.scheduleConfig !== null)) {
      config.scheduleConfig = this.schedule(raw.scheduleConfig, `${path}.scheduleConfig`);
    }
    return config;
  }

  private schedule(raw: unknown, path: string): { cron: string; timezone: string } | undefined {
    if (!isPlainObject(raw) || typeof raw.cron !== 'string') {
      this.fail(path, 'scheduled needs scheduleConfig {cron, timezone}');
      return undefined;
    }
    this.knownKeys(raw, ['cron', 'timezone'], path);
    const timezone = raw.timezone === undefined || raw.timezone === null ? 'UTC' : raw.timezone;
    if (typeof timezone !== 'string' || !isTimeZone(timezone)) {
      this.fail(`${path}.timezone`, 'timezone must be an IANA time zone such as Europe/Paris');
      return undefined;
    }
    if (!isCron(raw.cron, timezone)) {
      this.fail(`${path}.cron`, 'cron must be a valid cron expression (5 or 6 fields)');
      return undefined;
    }
    return { cron: raw.cron, timezone };
  }
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function isCron(expression: string, timezone: string): boolean {
  const fields = expression.trim().split(/\s+/);
  if (expression.length > 200 || fields.length < 5 || fields.length > 6) {
    return false;
  }
  try {
    CronExpressionParser.parse(expression, { tz: timezone, strict: false });
    return true;
  } catch {
    return false;
  }
}

/** Parses one configuration value and throws its problems (convenience for single objects). */
export function parseConfig<T>(parse: (checker: ConfigChecker) => T): T {
  const checker = new ConfigChecker();
  const value = parse(checker);
  checker.done();
  return value;
}
