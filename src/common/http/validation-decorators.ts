import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Allow, IsBoolean, IsOptional, ValidateBy, ValidateIf, isISO8601 } from 'class-validator';

/** The field may be left out, but when present it must not be null (non-nullable columns). */
export const PresentNotNull = (): PropertyDecorator =>
  ValidateIf((_object: object, value: unknown) => value !== undefined);

/** Query-string booleans: `true`/`false` (also `1`/`0`); anything else is left for @IsBoolean to refuse. */
export const QueryBoolean = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value,
  );

/**
 * A read-only key of a resource's representation, accepted in a write body and ignored: what GET answered can be
 * sent back with changes (the whitelist would otherwise refuse the key).
 */
export const ReadOnlyEcho = (): PropertyDecorator =>
  applyDecorators(ApiPropertyOptional({ readOnly: true, description: 'Read-only; ignored' }), IsOptional(), Allow());

/**
 * An identity key of a resource's representation (its `id`, a fixed `slug` …), accepted in a write body so that what
 * GET answered can be sent back; the service compares it with the stored value and refuses a different one (a write
 * never renames or moves a record; docs/decisions/write-bodies-as-read.md).
 */
export const FixedEcho = (options: ApiPropertyOptions): PropertyDecorator =>
  applyDecorators(ApiPropertyOptional(options), IsOptional(), Allow());

/** The deprecated `apply` query flag of writes (spec 9): a query-string boolean; `what` says what it does on the route. */
export const DeprecatedApplyParam = (what: string): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: Boolean, deprecated: true, description: `Deprecated: ${what} (answers X-API-Deprecated: true)` }),
    IsOptional(),
    QueryBoolean(),
    IsBoolean(),
  );

/**
 * Trims a string field before it is validated, so `@MinLength(1)` / `@IsNotEmpty()` refuse a name made only of
 * whitespace exactly as they refuse "" (otherwise "   " passes validation and is stored as ""). Other values are left
 * for the field's type check to refuse.
 */
export const Trimmed = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));

/**
 * Some character that is not white space (a text of only spaces or line breaks says nothing). Written anchored and
 * whole — the same strings as an unanchored `\S`, and linear to match — because the OpenAPI document carries it as
 * the property's `pattern`, and some client generators (Java's `@Pattern`) match a pattern against the whole value.
 */
export const NOT_BLANK_PATTERN = /^\s*\S[\s\S]*$/;

/**
 * An ISO 8601 date or date-time naming one instant: a real calendar day (`strict`: 2030-02-30 does not roll over)
 * in the extended calendar form (`2030-01-12`, `2030-01-12T10:00:00Z`). The validator alone also admits week dates
 * (`2030-W01-1`) and the basic format (`20300101T000000Z`), which `Date` cannot read, and ordinal dates, which it
 * misreads (`2030-012`, the 12th of January, became the 1st of December). Registered as `isDateString`, so a
 * failure hides the field's size checks like any kind check.
 */
const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}(?:$|[Tt])/;

export const IsInstant = (message: string): PropertyDecorator =>
  ValidateBy(
    {
      name: 'isDateString',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' &&
          CALENDAR_DATE.test(value) &&
          isISO8601(value, { strict: true }) &&
          !Number.isNaN(Date.parse(value)),
        defaultMessage: () => message,
      },
    },
  );
