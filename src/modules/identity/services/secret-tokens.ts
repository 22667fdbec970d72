import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** SHA-256 (hex) of a high-entropy secret: refresh tokens, API keys, client secrets, codes. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** `prefix` + 32 random bytes, base64url. */
export function newOpaqueToken(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** Constant-time comparison of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}

/** A numeric one-time code such as `042917`. */
export function randomDigits(length: number): string {
  let code = '';
  for (let i = 0; i < length; i += 1) {
    code += String(randomInt(0, 10));
  }
  return code;
}

const BACKUP_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** A backup code `xxxxx-xxxxx` (10 symbols of a 31-letter alphabet, about 49 bits). */
export function randomBackupCode(): string {
  let code = '';
  for (let i = 0; i < 10; i += 1) {
    code += BACKUP_ALPHABET[randomInt(0, BACKUP_ALPHABET.length)];
  }
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

/** Shows only the end of an address: `+49******4567`, `a***@example.com`. */
export function maskDestination(destination: string): string {
  const at = destination.indexOf('@');
  if (at > 0) {
    return `${destination[0]}***${destination.slice(at)}`;
  }
  return `${destination.slice(0, 3)}${'*'.repeat(Math.max(0, destination.length - 7))}${destination.slice(-4)}`;
}
