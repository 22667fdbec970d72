import { loadConfig } from './app.config.js';
import { ConfigError } from './env.js';

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      return error;
    }
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has working defaults with an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      publicBaseUrl: 'http://localhost:3000',
      authIssuerUrl: 'http://localhost:3000',
      logLevel: 'info',
      bodyLimitBytes: 5 * 1024 * 1024,
      corsOrigins: [],
      trustProxy: 'loopback',
      rateLimit: { perMinute: 100, windowMs: 60_000 },
      database: { url: undefined, poolSize: 10, runMigrations: true, dataDir: '.data' },
      redisUrl: undefined,
    });
  });

  it('allows private webhook receivers by default except under NODE_ENV=production, and as told', () => {
    expect(loadConfig({}).webhooks.allowPrivate).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).webhooks.allowPrivate).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE: 'true' }).webhooks.allowPrivate).toBe(true);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'false' }).webhooks.allowPrivate).toBe(false);
  });

  it('reads and normalises every kind of value', () => {
    const config = loadConfig({
      PORT: '8080',
      PUBLIC_BASE_URL: 'https://quire.example.com/',
      DATABASE_URL: 'postgres://quire:secret@db:5432/quire',
      REDIS_URL: 'redis://cache:6379',
      LOG_LEVEL: 'debug',
      CORS_ORIGINS: 'https://a.example.com, https://b.example.com',
      DB_RUN_MIGRATIONS: 'false',
      RATE_LIMIT_PER_MINUTE: '250',
      TRUST_PROXY: '2',
    });
    expect(config).toMatchObject({
      port: 8080,
      publicBaseUrl: 'https://quire.example.com',
      authIssuerUrl: 'https://quire.example.com',
      logLevel: 'debug',
      corsOrigins: ['https://a.example.com', 'https://b.example.com'],
      redisUrl: 'redis://cache:6379',
      rateLimit: { perMinute: 250 },
      trustProxy: 2,
      database: { url: 'postgres://quire:secret@db:5432/quire', runMigrations: false },
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://localhost/quire' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL'],
    [{ PUBLIC_BASE_URL: 'ftp://example.com' }, 'PUBLIC_BASE_URL'],
    [{ AUTH_ISSUER_URL: 'issuer' }, 'AUTH_ISSUER_URL'],
    [{ REDIS_URL: 'http://cache:6379' }, 'REDIS_URL'],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, 'RATE_LIMIT_PER_MINUTE'],
    [{ BODY_LIMIT_BYTES: '5MB' }, 'BODY_LIMIT_BYTES'],
    [{ DB_RUN_MIGRATIONS: 'maybe' }, 'DB_RUN_MIGRATIONS'],
    [{ SMTP_URL: 'mail.example.com' }, 'SMTP_URL'],
  ])('rejects %j with a ConfigError naming %s', (env, variable) => {
    const error = errorOf(env);
    expect(error.message.startsWith(`${variable} `)).toBe(true);
  });

  it('does not echo a malformed URL, which may hold a password', () => {
    const error = errorOf({ DATABASE_URL: 'postgres://quire:s3cret@db:5432:5432/quire' });
    expect(error.message).toMatch(/^DATABASE_URL must be a URL/);
    expect(error.message).not.toContain('s3cret');
  });
});
