/**
 * Whether a UUID a client sent names the stored one. PostgreSQL answers UUIDs in lower case and clients may send
 * them in any case (RFC 9562 compares them case-insensitively); anything but a string names nothing.
 */
export function sameUuid(sent: unknown, stored: string): boolean {
  return typeof sent === 'string' && sent.toLowerCase() === stored.toLowerCase();
}
