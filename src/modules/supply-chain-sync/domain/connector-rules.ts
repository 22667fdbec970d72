import { CronExpressionParser } from 'cron-parser';
import type { FieldMapping, MappingRule } from './field-mapping.js';

/** The next time a cron expression fires after `after`, in `timezone`. */
export function nextCronTime(cron: string, timezone: string | null, after: Date): Date {
  return CronExpressionParser.parse(cron, { currentDate: after, tz: timezone ?? 'UTC' })
    .next()
    .toDate();
}

/** Reverse direction of a bidirectional connector: only `direct` rules can be inverted (target → source). */
export function invertMapping(mapping: FieldMapping): FieldMapping {
  const rules: MappingRule[] = (mapping.rules ?? [])
    .filter(
      (rule) => rule.enabled !== false && (rule.transformType ?? 'direct') === 'direct' && rule.sourceFieldId,
    )
    .map((rule) => ({
      sourceFieldId: rule.targetFieldId,
      targetFieldId: rule.sourceFieldId as string,
      transformType: 'direct',
      propagationMode: 'oneway',
    }));
  return { rules, unmappedFields: mapping.unmappedFields ?? 'ignore' };
}
