import { type ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { AppException } from '../errors/app.exception.js';
import { nulTextProblems } from './nul-text.js';

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
 * The application's ValidationPipe, with one check added and one shortcut. The check: a text property holding
 * U+0000, which no PostgreSQL text or jsonb value can hold, is refused here naming its field (nul-text.ts).
 * The shortcut: most GETs carry no query parameters, and validating `{}` against a query DTO gives the same answer
 * every time, so it is asked once per DTO class and remembered.
 * class-validator's metadata lookup walks every registered class per validation, which made an empty query
 * a measurable share of a cached read (docs/performance.md). Bodies and non-empty queries are validated as before.
 */
export class QueryValidationPipe extends ValidationPipe {
  private readonly emptyQueryValid = new Map<unknown, boolean>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const result = await this.validated(value, metadata);
    const problems = nulTextProblems(result);
    if (problems.length > 0) {
      throw AppException.validation(problems);
    }
    return result;
  }

  private async validated(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
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
