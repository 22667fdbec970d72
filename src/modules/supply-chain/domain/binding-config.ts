import type { ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import {
  filterFieldRefs,
  filterOperandDetails,
  formulaSourceFieldIds,
  unknownFieldDetails,
} from '../dtos/sync-config-fields.validation.js';
import type {
  ConflictResolution,
  ConnectionRecord,
  FieldMapping,
  FieldMappingRule,
  OrderBookRecord,
  ReceiverFilter,
} from './supply-chain.types.js';

/*
 * The receiver configuration of a new binding (docs/supply-chain.md, "Bindings"): the defaults a binding gets when
 * the buyer sends none, and the field-id checks of what it sends. Pure: BindingsService reads the catalog's and the
 * order book's fields and passes them in.
 */

/**
 * Field checks of a binding's configuration against the catalog (source) and the order book (target): every field
 * id it names exists, and the operands of its receiver filter and accept rules — which run on the catalog row — fit
 * the catalog fields they test (`filterOperandDetails`: a select operand names an option, a number is a number…).
 */
export function bindingFieldProblems(
  config: {
    fieldMapping: FieldMapping;
    receiverFilter: ReceiverFilter;
    conflictResolution: ConflictResolution;
  },
  source: Set<string>,
  target: Set<string>,
  sourceFields: readonly FieldDefinition[],
): ErrorDetail[] {
  const sourceRefs: Array<[string, string]> = [];
  const targetRefs: Array<[string, string]> = [];
  config.fieldMapping.rules.forEach((rule, index) => {
    for (const id of rule.sourceFieldIds ?? [rule.sourceFieldId]) {
      sourceRefs.push([`fieldMapping.rules[${index}].sourceFieldId`, id]);
    }
    for (const id of formulaSourceFieldIds(rule)) {
      sourceRefs.push([`fieldMapping.rules[${index}].formula`, id]);
    }
    for (const id of rule.targetFieldIds ?? [rule.targetFieldId]) {
      targetRefs.push([`fieldMapping.rules[${index}].targetFieldId`, id]);
    }
  });
  const filter = config.receiverFilter;
  sourceRefs.push(...filterFieldRefs(filter.filterGroup, 'receiverFilter.filterGroup'));
  for (const key of ['autoAcceptIf', 'requireApprovalIf', 'autoRejectIf'] as const) {
    sourceRefs.push(
      ...filterFieldRefs(filter.manualAcceptRules?.[key], `receiverFilter.manualAcceptRules.${key}`),
    );
  }
  for (const id of filter.deduplicationFieldIds ?? []) {
    targetRefs.push(['receiverFilter.deduplicationFieldIds', id]);
  }
  for (const id of Object.keys(config.conflictResolution.fieldStrategies)) {
    targetRefs.push([`conflictResolution.fieldStrategies.${id}`, id]);
  }
  const operandDetails = [
    ...filterOperandDetails(filter.filterGroup, 'receiverFilter.filterGroup', sourceFields),
    ...(['autoAcceptIf', 'requireApprovalIf', 'autoRejectIf'] as const).flatMap((key) =>
      filterOperandDetails(
        filter.manualAcceptRules?.[key],
        `receiverFilter.manualAcceptRules.${key}`,
        sourceFields,
      ),
    ),
  ];
  return [
    ...unknownFieldDetails(sourceRefs, source, 'the catalog'),
    ...unknownFieldDetails(targetRefs, target, 'the order book'),
    ...operandDetails,
  ];
}

function directRule(sourceFieldId: string, targetFieldId: string): FieldMappingRule {
  return { sourceFieldId, targetFieldId, enabled: true, transformType: 'direct', propagationMode: 'oneway' };
}

/**
 * The default direct rules of a binding, the first kind that gives any: to the order-book fields generated from this
 * connection; else to those generated from another connection of the same catalog (an order book made from C1 bound
 * to C2); else between fields with the same id in the catalog and the order book. Only fields both still have.
 */
export function directRules(
  connection: ConnectionRecord,
  orderBook: OrderBookRecord,
  source: Set<string>,
  target: Set<string>,
): FieldMappingRule[] {
  const fromGenerated = (keep: (field: OrderBookRecord['generatedFields'][number]) => boolean) =>
    orderBook.generatedFields
      .filter((field) => keep(field) && source.has(field.sourceFieldId) && target.has(field.id))
      .map((field) => directRule(field.sourceFieldId, field.id));
  const ofConnection = fromGenerated((field) => field.connectionId === connection.id);
  if (ofConnection.length > 0) {
    return ofConnection;
  }
  const ofCatalog = fromGenerated((field) => field.sourceCatalogId === connection.catalogId);
  if (ofCatalog.length > 0) {
    return ofCatalog;
  }
  return [...source].filter((id) => target.has(id)).map((id) => directRule(id, id));
}

/**
 * Whether a binding's mapping writes any order-book field: an enabled rule, or `unmappedFields: create` with a catalog
 * field that finds its order-book field (generated from the catalog, same id or same name — as propagation does).
 */
export function mapsAnything(
  mapping: FieldMapping,
  sourceFields: FieldDefinition[],
  targetFields: FieldDefinition[],
  orderBook: OrderBookRecord,
  catalogId: string,
): boolean {
  if (mapping.rules.some((rule) => rule.enabled !== false)) {
    return true;
  }
  if (mapping.unmappedFields !== 'create') {
    return false;
  }
  const ids = new Set(targetFields.map((field) => field.id));
  const names = new Set(targetFields.map((field) => field.name.trim().toLowerCase()));
  return sourceFields.some(
    (field) =>
      ids.has(field.id) ||
      names.has(field.name.trim().toLowerCase()) ||
      orderBook.generatedFields.some(
        (generated) =>
          generated.sourceCatalogId === catalogId &&
          generated.sourceFieldId === field.id &&
          ids.has(generated.id),
      ),
  );
}

/**
 * Without a fieldMapping: the connection's suggestion, keeping only the rules that fit — every source a field of
 * the catalog and every target a field of this order book (the supplier cannot know the buyer's fields, so a rule
 * that does not fit is skipped, not reported as the buyer's error); when no rule of it fits (or there is none),
 * the direct rules (`directRules`).
 */
export function defaultMapping(
  connection: ConnectionRecord,
  orderBook: OrderBookRecord,
  source: Set<string>,
  target: Set<string>,
): FieldMapping {
  const suggested = connection.defaultReceiverConfig?.suggestedFieldMapping;
  const fitting = (suggested?.rules ?? []).filter(
    (rule) =>
      (rule.sourceFieldIds ?? [rule.sourceFieldId]).every((id) => source.has(id)) &&
      formulaSourceFieldIds(rule).every((id) => source.has(id)) &&
      (rule.targetFieldIds ?? [rule.targetFieldId]).every((id) => target.has(id)),
  );
  if (suggested && fitting.length > 0) {
    return { ...suggested, rules: fitting };
  }
  return { rules: directRules(connection, orderBook, source, target), unmappedFields: 'ignore' };
}

export function defaultReceiverFilter(connection: ConnectionRecord): Record<string, unknown> {
  const mode = connection.defaultReceiverConfig?.suggestedAcceptMode;
  return mode ? { acceptMode: mode } : {};
}
