import type { GeneratedField, ScField } from './supply-chain.types.js';

/** Field-type families whose values convert without loss of meaning (type_convert between them). */
const FAMILIES: Record<string, string> = {
  text: 'text',
  long_text: 'text',
  number: 'number',
  currency: 'number',
  percent: 'number',
  rating: 'number',
  duration: 'number',
  auto_number: 'number',
  date: 'date',
  datetime: 'date',
  created_time: 'date',
  updated_time: 'date',
  single_select: 'select',
  multi_select: 'select',
  boolean: 'boolean',
};

export interface SuggestedMapping {
  sourceFieldId: string;
  sourceFieldName: string;
  sourceType: string;
  targetFieldId: string;
  targetFieldName: string;
  targetType: string;
  /** 0..1: name similarity × type compatibility (1 for a field generated from this very source field). */
  confidence: number;
  transformType: 'direct' | 'type_convert' | 'option_mapping';
  reason: 'generated_from_source' | 'same_name' | 'similar_name';
}

export interface MappingPreview {
  suggestedMappings: SuggestedMapping[];
  unmappedSourceFields: Array<{ id: string; name: string; type: string }>;
  unmappedTargetFields: Array<{ id: string; name: string; type: string }>;
}

export const MIN_CONFIDENCE = 0.5;

export function normalizeName(name: string): string {
  return name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

function levenshtein(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const current = row[j] as number;
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        previous + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      previous = current;
    }
  }
  return row[b.length] as number;
}

/** Name similarity in 0..1: equal normalized names 1; else the best of edit-distance ratio and token overlap. */
export function nameSimilarity(a: string, b: string): number {
  const x = normalizeName(a);
  const y = normalizeName(b);
  if (x === '' || y === '') {
    return 0;
  }
  if (x === y || x.replace(/ /g, '') === y.replace(/ /g, '')) {
    return 1;
  }
  const edit = 1 - levenshtein(x, y) / Math.max(x.length, y.length);
  const tx = new Set(x.split(' '));
  const ty = new Set(y.split(' '));
  const shared = [...tx].filter((token) => ty.has(token)).length;
  const jaccard = shared / new Set([...tx, ...ty]).size;
  const contains = x.includes(y) || y.includes(x) ? 0.8 : 0;
  return Math.max(edit, jaccard, contains);
}

/** Type compatibility in 0..1: same type 1, same family 0.9, text target 0.75 (anything renders as text), else 0.5. */
export function typeCompatibility(source: string, target: string): number {
  if (source === target) {
    return 1;
  }
  const family = FAMILIES[source];
  if (family !== undefined && family === FAMILIES[target]) {
    return 0.9;
  }
  return FAMILIES[target] === 'text' ? 0.75 : 0.5;
}

function transformFor(source: ScField, target: ScField): SuggestedMapping['transformType'] {
  if (source.type === target.type) {
    if (source.type === 'single_select' || source.type === 'multi_select') {
      const targetOptions = new Set((target.selectOptions ?? []).map((option) => option.id));
      return (source.selectOptions ?? []).every((option) => targetOptions.has(option.id))
        ? 'direct'
        : 'option_mapping';
    }
    return 'direct';
  }
  return FAMILIES[source.type] === 'select' && FAMILIES[target.type] === 'select'
    ? 'option_mapping'
    : 'type_convert';
}

/**
 * Suggests a mapping from the connection's catalog fields to the order book's fields: a field generated from the
 * source field (same catalog) first, then the best name/type match at or above MIN_CONFIDENCE; each target is used
 * once, highest confidence first.
 */
export function previewMapping(
  catalogId: string,
  sourceFields: ScField[],
  targetFields: ScField[],
  generated: GeneratedField[],
): MappingPreview {
  const candidates: SuggestedMapping[] = [];
  for (const source of sourceFields) {
    for (const target of targetFields) {
      const fromSource = generated.some(
        (field) =>
          field.id === target.id && field.sourceCatalogId === catalogId && field.sourceFieldId === source.id,
      );
      const similarity = fromSource ? 1 : nameSimilarity(source.name, target.name);
      const confidence = fromSource
        ? 1
        : Math.round(similarity * typeCompatibility(source.type, target.type) * 100) / 100;
      if (confidence < MIN_CONFIDENCE) {
        continue;
      }
      candidates.push({
        sourceFieldId: source.id,
        sourceFieldName: source.name,
        sourceType: source.type,
        targetFieldId: target.id,
        targetFieldName: target.name,
        targetType: target.type,
        confidence,
        // A field generated from the source is kept in step with it (new options, renamed labels) and receives its
        // values converted as its generation converted the type (relation → text…): a direct copy.
        transformType: fromSource ? 'direct' : transformFor(source, target),
        reason: fromSource ? 'generated_from_source' : similarity === 1 ? 'same_name' : 'similar_name',
      });
    }
  }
  const rank = (mapping: SuggestedMapping): number => (mapping.reason === 'generated_from_source' ? 0 : 1);
  candidates.sort(
    (a, b) =>
      b.confidence - a.confidence || rank(a) - rank(b) || a.sourceFieldId.localeCompare(b.sourceFieldId),
  );
  const usedSources = new Set<string>();
  const usedTargets = new Set<string>();
  const suggestedMappings: SuggestedMapping[] = [];
  for (const candidate of candidates) {
    if (!usedSources.has(candidate.sourceFieldId) && !usedTargets.has(candidate.targetFieldId)) {
      usedSources.add(candidate.sourceFieldId);
      usedTargets.add(candidate.targetFieldId);
      suggestedMappings.push(candidate);
    }
  }
  const brief = (field: ScField): { id: string; name: string; type: string } => ({
    id: field.id,
    name: field.name,
    type: field.type,
  });
  return {
    suggestedMappings,
    unmappedSourceFields: sourceFields.filter((field) => !usedSources.has(field.id)).map(brief),
    unmappedTargetFields: targetFields.filter((field) => !usedTargets.has(field.id)).map(brief),
  };
}
