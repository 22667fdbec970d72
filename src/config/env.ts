/**
 * Reading and checking environment variables. The only module that touches process.env: everything else
 * receives the parsed AppConfig. A bad value stops start-up with a message naming the variable.
 */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

export function readString(env: Env, name: string, fallback?: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? fallback : value.trim();
}

export function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = readString(env, name);
  if (raw === undefined) {
    return fallback;
  }
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

export function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = readString(env, name);
  if (raw === undefined) {
    return fallback;
  }
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) {
    return true;
  }
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) {
    return false;
  }
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function readUrl(env: Env, name: string, protocols: string[], fallback?: string): string | undefined {
  const raw = readString(env, name, fallback);
  if (raw === undefined) {
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not echoed: a URL can carry a password.
    throw new ConfigError(
      `${name} must be a URL such as ${protocols[0]}://host:port/path, got something that is not a URL`,
    );
  }
  if (!protocols.includes(url.protocol.replace(/:$/, ''))) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

export function readEnum<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = readString(env, name);
  if (raw === undefined) {
    return fallback;
  }
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

export function readList(env: Env, name: string): string[] {
  return (readString(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}
