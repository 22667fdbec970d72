import { type ArgumentMetadata, ValidationPipe } from '@nestjs/common';

type Constructor = new () => object;

function isEmptyPlainObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return false;
  }
  for (const _key in value) {
    return false;
  }
  return true;
}

/**
 * The application's ValidationPipe, with one shortcut: most GETs carry no query parameters, and validating `{}`
 * against a query DTO gives the same answer every time, so it is asked once per DTO class and remembered.
 * class-validator's metadata lookup walks every registered class per validation, which made an empty query
 * a measurable share of a cached read (docs/performance.md). Bodies and non-empty queries are validated as before.
 */
export class QueryValidationPipe extends ValidationPipe {
  private readonly emptyQueryValid = new Map<unknown, boolean>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.metatype as Constructor | undefined;
    if (metadata.type !== 'query' || !metatype || !this.toValidate(metadata) || !isEmptyPlainObject(value)) {
      return super.transform(value, metadata);
    }
    let valid = this.emptyQueryValid.get(metatype);
    if (valid === undefined) {
      valid = await super.transform({}, metadata).then(
        () => true,
        () => false,
      );
      this.emptyQueryValid.set(metatype, valid);
    }
    // An empty query that fails (a required parameter) goes the long way, so the error is the usual one.
    return valid ? new metatype() : super.transform(value, metadata);
  }
}
