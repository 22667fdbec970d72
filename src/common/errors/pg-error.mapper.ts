import { ErrorCode } from './error-code.js';
import { AppException } from './app.exception.js';

interface PgLikeError {
  code?: string;
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
 * The API field a key violation is about, from PostgreSQL's detail (`Key (organization_id, user_id)=(…) already
 * exists.`): the last key column (the tenant columns come first in every key), in the API's camelCase, without a
 * function around it (`lower(email)`). Undefined when the detail does not say: never the constraint's name, which is
 * an internal name a client cannot act on.
 */
function keyField(detail: string | undefined): string | undefined {
  const columns = /^Key \((.+?)\)=/.exec(detail ?? '')?.[1]?.split(', ');
  const last = columns?.[columns.length - 1]?.replace(/^\w+\((\w+)\)$/, '$1');
  return last && /^\w+$/.test(last) ? last.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase()) : undefined;
}

/**
 * Socket errors of a database connection that could not be made or was lost, counted only as TypeORM wraps them (a
 * query's `driverError`): the same codes from an outgoing call of the request (a DNS lookup) are not the database's.
 */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);
/** node-pg's own messages for a lost connection or a pool that could not hand one out in time. */
const CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * The database cannot be reached (down, restarting, out of connections): 503 SERVICE_UNAVAILABLE, as the readiness
 * probe says, rather than a 500 that reads as a bug. PostgreSQL's class 08 (connection exception), 57P01–57P03
 * (shutting down, cannot connect now), 53300 (too many connections), and the socket errors of node-pg.
 */
function unreachable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) {
    return false;
  }
  const driverError = (error as { driverError?: unknown }).driverError;
  const candidate = (driverError ?? error) as { code?: unknown; message?: unknown };
  const code = typeof candidate.code === 'string' ? candidate.code : '';
  return (
    /^08[0-9A-Z]{3}$/.test(code) ||
    ['57P01', '57P02', '57P03', '53300'].includes(code) ||
    (driverError !== undefined && CONNECTION_ERRNOS.has(code)) ||
    (typeof candidate.message === 'string' && CONNECTION_MESSAGES.test(candidate.message))
  );
}

/**
 * Turns PostgreSQL errors that a client can cause into clear codes, and an unreachable database into 503. Anything
 * not listed stays an internal error: a constraint we did not expect is a bug, not bad input.
 */
export function mapPgError(error: unknown): AppException | undefined {
  if (unreachable(error)) {
    return new AppException(ErrorCode.SERVICE_UNAVAILABLE, { details: [{ reason: 'the database cannot be reached; retry later' }] });
  }
  const pg = pgErrorOf(error);
  if (!pg?.code) {
    return undefined;
  }
  switch (pg.code) {
    case '23505': // unique_violation
      return new AppException(ErrorCode.ALREADY_EXISTS, {
        details: [{ field: keyField(pg.detail), reason: 'already exists' }],
      });
    case '23502': // not_null_violation: a required value sent as null past a DTO
      return new AppException(ErrorCode.VALIDATION_ERROR, {
        details: [{ field: pg.column, reason: 'must not be null' }],
      });
    case '23503': // foreign_key_violation
      return new AppException(ErrorCode.VALIDATION_ERROR, {
        details: [{ field: keyField(pg.detail), reason: 'refers to something that does not exist' }],
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
