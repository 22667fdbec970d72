import { isUUID } from 'class-validator';

/**
 * A sync request's id as a client may choose it (`requestId`, spec 4.8 gives no format): URL-safe, since it is a path
 * segment of `/orderbooks/{id}/requests/{requestId}`, at most 128 characters. Unique within the organization.
 */
export const SYNC_REQUEST_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._~:-]{0,127}$/;

/** The pattern in words, for VALIDATION_ERROR details. */
export const SYNC_REQUEST_ID_RULE =
  'requestId must be 1–128 characters: letters, digits and . _ ~ : - (not starting with a sign)';

/** The stored form of a sync request id (UUIDs in lower case, as generated ones), or null for a malformed one. */
export function syncRequestKey(value: string): string | null {
  if (!SYNC_REQUEST_ID_PATTERN.test(value)) {
    return null;
  }
  return isUUID(value) ? value.toLowerCase() : value;
}
