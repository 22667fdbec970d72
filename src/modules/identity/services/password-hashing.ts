import argon2 from 'argon2';

/**
 * Password hashing: argon2id with OWASP's recommended minimum (19 MiB memory, 2 passes, 1 lane). Each hash
 * records its own parameters, so raising them later keeps older hashes verifiable.
 */
export const PASSWORD_HASH_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, PASSWORD_HASH_OPTIONS);
}

/** False (not an exception) for a wrong password or a malformed hash. */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}
