import {
  ACCEPT_MODES,
  CONFLICT_STRATEGIES,
  type ConflictResolution,
  type ConflictStrategy,
  DEDUPLICATION_STRATEGIES,
  DEFAULT_ACTIONS,
  type ManualAcceptRules,
  type ReceiverFilter,
} from '../domain/supply-chain.types.js';
import { isPlainObject } from '../../documents/fields/field-value.utils.js';
import type { ConfigChecker } from './sync-config.validation.js';

/*
 * What a buyer's binding says about receiving (spec 2.14): the receiver filter (accept mode, filter group, manual
 * accept rules, deduplication) and the conflict resolution between upstream and local edits. Parsed through the
 * ConfigChecker like every supply-chain configuration (sync-config.validation.ts).
 */

/** `{acceptMode, filterGroup, manualAcceptRules, deduplicationStrategy, deduplicationFieldIds}`; defaults filled in. */
export function parseReceiverFilter(
  checker: ConfigChecker,
  raw: unknown,
  path: string,
): ReceiverFilter | undefined {
  if (raw === undefined || raw === null) {
    return { acceptMode: 'auto' };
  }
  if (!isPlainObject(raw)) {
    checker.fail(path, `${path} must be an object`);
    return undefined;
  }
  checker.knownKeys(
    raw,
    ['acceptMode', 'filterGroup', 'manualAcceptRules', 'deduplicationStrategy', 'deduplicationFieldIds'],
    path,
  );
  const acceptMode = checker.enumValue(raw.acceptMode, ACCEPT_MODES, `${path}.acceptMode`, 'auto') ?? 'auto';
  const result: ReceiverFilter = { acceptMode };
  if (raw.filterGroup !== undefined && raw.filterGroup !== null) {
    result.filterGroup = checker.filterGroup(raw.filterGroup, `${path}.filterGroup`);
  }
  if (raw.manualAcceptRules !== undefined && raw.manualAcceptRules !== null) {
    const rules = raw.manualAcceptRules;
    if (!isPlainObject(rules)) {
      checker.fail(`${path}.manualAcceptRules`, 'manualAcceptRules must be an object');
    } else {
      checker.knownKeys(
        rules,
        ['defaultAction', 'autoAcceptIf', 'requireApprovalIf', 'autoRejectIf'],
        `${path}.manualAcceptRules`,
      );
      const parsed: ManualAcceptRules = {
        defaultAction:
          checker.enumValue(
            rules.defaultAction,
            DEFAULT_ACTIONS,
            `${path}.manualAcceptRules.defaultAction`,
            'manual',
          ) ?? 'manual',
      };
      for (const key of ['autoAcceptIf', 'requireApprovalIf', 'autoRejectIf'] as const) {
        if (rules[key] !== undefined && rules[key] !== null) {
          parsed[key] = checker.filterGroup(rules[key], `${path}.manualAcceptRules.${key}`);
        }
      }
      result.manualAcceptRules = parsed;
    }
  }
  if (raw.deduplicationStrategy !== undefined && raw.deduplicationStrategy !== null) {
    const strategy = checker.enumValue(
      raw.deduplicationStrategy,
      DEDUPLICATION_STRATEGIES,
      `${path}.deduplicationStrategy`,
    );
    const ids = raw.deduplicationFieldIds;
    if (strategy) {
      result.deduplicationStrategy = strategy;
      if (
        !Array.isArray(ids) ||
        ids.length === 0 ||
        ids.length > 20 ||
        (strategy === 'by_field' && ids.length !== 1)
      ) {
        checker.fail(
          `${path}.deduplicationFieldIds`,
          strategy === 'by_field'
            ? 'by_field needs exactly one field id'
            : 'by_fields needs 1 to 20 field ids',
        );
      } else {
        result.deduplicationFieldIds = ids.map(
          (id, index) => checker.id(id, `${path}.deduplicationFieldIds[${index}]`) ?? '',
        );
      }
    }
  } else if (raw.deduplicationFieldIds !== undefined) {
    checker.fail(
      `${path}.deduplicationStrategy`,
      'deduplicationFieldIds needs deduplicationStrategy (by_field or by_fields)',
    );
  }
  return result;
}

/** `{defaultStrategy, fieldStrategies}`; `keep_upstream` when absent. */
export function parseConflictResolution(
  checker: ConfigChecker,
  raw: unknown,
  path: string,
): ConflictResolution | undefined {
  if (raw === undefined || raw === null) {
    return { defaultStrategy: 'keep_upstream', fieldStrategies: {} };
  }
  if (!isPlainObject(raw)) {
    checker.fail(path, `${path} must be an object {defaultStrategy, fieldStrategies}`);
    return undefined;
  }
  checker.knownKeys(raw, ['defaultStrategy', 'fieldStrategies'], path);
  const defaultStrategy =
    checker.enumValue(raw.defaultStrategy, CONFLICT_STRATEGIES, `${path}.defaultStrategy`, 'keep_upstream') ??
    'keep_upstream';
  const fieldStrategies: Record<string, { strategy: ConflictStrategy }> = {};
  if (raw.fieldStrategies !== undefined && raw.fieldStrategies !== null) {
    if (!isPlainObject(raw.fieldStrategies)) {
      checker.fail(`${path}.fieldStrategies`, 'fieldStrategies must map field ids to {strategy}');
    } else {
      for (const [fieldId, entry] of Object.entries(raw.fieldStrategies)) {
        const at = `${path}.fieldStrategies.${fieldId}`;
        checker.id(fieldId, at);
        if (isPlainObject(entry)) {
          checker.knownKeys(entry, ['strategy'], at);
        }
        const strategy = checker.enumValue(
          isPlainObject(entry) ? entry.strategy : entry,
          CONFLICT_STRATEGIES,
          `${at}.strategy`,
        );
        if (strategy) {
          fieldStrategies[fieldId] = { strategy };
        }
      }
    }
  }
  return { defaultStrategy, fieldStrategies };
}
