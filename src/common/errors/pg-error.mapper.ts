import { ErrorCode } from './error-code.js';
import { AppException } from './app.exception.js';

interface PgLikeError {
  code?: string;
  constraint?: string;
  detail?: string;
  column?: string;
}

function pgErrorOf(error: unknown): PgLikeError | undefined {
  if (typeof error !== 'object' || error === null) {
    return undefined;
  }
  const candidate = (error as { driverError?: unknown }).driverError ?? error;
  const code = (candidate as PgLikeError).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? (candidate as PgLikeError) : undefined;
}

/**
 * Turns PostgreSQL errors that a client can cause into clear codes. Anything not listed stays an internal
 * error: a constraint we did not expect is a bug, not bad input.
 */
export function mapPgError(error: unknown): AppException | undefined {
  const pg = pgErrorOf(error);
  if (!pg?.code) {
    return undefined;
  }
  switch (pg.code) {
    case '23505': // unique_violation
      return new AppException(ErrorCode.ALREADY_EXISTS, {
        details: [{ field: pg.constraint, reason: 'already exists' }],
      });
    case '23502': // not_null_violation: a required value sent as null past a DTO
      return new AppException(ErrorCode.VALIDATION_ERROR, {
        details: [{ field: pg.column, reason: 'must not be null' }],
      });
    case '23503': // foreign_key_violation
      return new AppException(ErrorCode.VALIDATION_ERROR, {
        details: [{ field: pg.constraint, reason: 'refers to something that does not exist' }],
      });
    case '22P02': // invalid_text_representation (e.g. a malformed uuid)
    case '22003': // numeric_value_out_of_range
    case '22007': // invalid_datetime_format
    case '22008': // datetime_field_overflow
      return new AppException(ErrorCode.VALIDATION_ERROR, { details: [{ reason: 'invalid value' }] });
    case '22P05': // untranslatable_character: U+0000 in jsonb
    case '22021': // character_not_in_repertoire: U+0000 in a text parameter
      return new AppException(ErrorCode.VALIDATION_ERROR, {
        details: [{ reason: 'text must not contain the NUL character (U+0000)' }],
      });
    case '40001': // serialization_failure
    case '40P01': // deadlock_detected
      return new AppException(ErrorCode.CONFLICT, { details: [{ reason: 'concurrent change, retry' }] });
    case '57014': // query_canceled (statement timeout)
      return new AppException(ErrorCode.SERVICE_UNAVAILABLE, {
        details: [{ reason: 'query took too long' }],
      });
    default:
      return undefined;
  }
}
