import type { MigrationInterface, QueryRunner } from 'typeorm';

const PROVIDERS = `('google', 'github', 'wechat', 'dingtalk', 'feishu')`;

/**
 * Identity and access: session refresh-token rotation, login throttling, one-time codes, two-step
 * verification, API keys, OAuth clients and authorization codes, third-party login providers and bindings.
 */
export class Identity1732240100000 implements MigrationInterface {
  name = 'Identity1732240100000';

  async up(q: QueryRunner): Promise<void> {
    // A session is also the refresh-token family of an OAuth authorization (client_id <> 'quire').
    await q.query(`ALTER TABLE sessions ADD COLUMN client_id text NOT NULL DEFAULT 'quire'`);
    await q.query(`ALTER TABLE sessions ADD COLUMN scope text`);
    await q.query(`ALTER TABLE sessions ADD COLUMN auth_method text NOT NULL DEFAULT 'password'`);
    await q.query(`CREATE INDEX sessions_client_idx ON sessions (client_id) WHERE revoked_at IS NULL`);

    await q.query(`
      CREATE TABLE spent_refresh_tokens (
        token_hash text PRIMARY KEY,
        session_id uuid NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        spent_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX spent_refresh_tokens_session_idx ON spent_refresh_tokens (session_id)`);

    await q.query(`
      CREATE TABLE login_failures (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        throttle_key text NOT NULL,
        failed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX login_failures_key_idx ON login_failures (throttle_key, failed_at DESC)`);

    await q.query(`
      CREATE TABLE one_time_codes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        purpose text NOT NULL CHECK (purpose IN ('phone_login', 'two_factor_login', 'two_factor_enroll')),
        recipient text NOT NULL,
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        code_hash text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX one_time_codes_lookup_idx ON one_time_codes (purpose, recipient, created_at DESC)`,
    );

    await q.query(`
      CREATE TABLE user_two_factor (
        user_id uuid PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        method text CHECK (method IN ('totp', 'sms', 'email')),
        totp_secret text,
        last_totp_step bigint,
        pending_method text CHECK (pending_method IN ('totp', 'sms', 'email')),
        pending_secret text,
        pending_phone text,
        pending_created_at timestamptz,
        enabled_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE backup_codes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        code_hash text NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX backup_codes_user_idx ON backup_codes (user_id)`);

    await q.query(`
      CREATE TABLE login_challenges (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash text NOT NULL,
        method text NOT NULL CHECK (method IN ('totp', 'sms', 'email')),
        auth_method text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz,
        CONSTRAINT login_challenges_token_uq UNIQUE (token_hash)
      )`);
    await q.query(`CREATE INDEX login_challenges_user_idx ON login_challenges (user_id)`);

    await q.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name text NOT NULL,
        prefix text NOT NULL,
        key_hash text NOT NULL,
        scopes text[] NOT NULL,
        ip_allowlist text[] NOT NULL DEFAULT '{}',
        expires_at timestamptz,
        last_used_at timestamptz,
        last_used_ip text,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT api_keys_hash_uq UNIQUE (key_hash)
      )`);
    await q.query(`CREATE INDEX api_keys_user_idx ON api_keys (user_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE api_key_usage (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        api_key_id uuid NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
        used_at timestamptz NOT NULL DEFAULT now(),
        ip text,
        method text NOT NULL,
        path text NOT NULL
      )`);
    await q.query(`CREATE INDEX api_key_usage_key_idx ON api_key_usage (api_key_id, used_at DESC)`);

    await q.query(`
      CREATE TABLE oauth_clients (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id text NOT NULL,
        owner_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name text NOT NULL,
        redirect_uris text[] NOT NULL DEFAULT '{}',
        allowed_scopes text[] NOT NULL,
        grant_types text[] NOT NULL,
        secret_hash text NOT NULL,
        secret_rotated_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT oauth_clients_client_id_uq UNIQUE (client_id)
      )`);
    await q.query(`CREATE INDEX oauth_clients_owner_idx ON oauth_clients (owner_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE oauth_authorization_codes (
        code_hash text PRIMARY KEY,
        client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        redirect_uri text NOT NULL,
        scope text NOT NULL,
        code_challenge text,
        nonce text,
        auth_time timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        session_id uuid
      )`);
    await q.query(
      `CREATE INDEX oauth_authorization_codes_client_idx ON oauth_authorization_codes (client_id)`,
    );

    await q.query(`
      CREATE TABLE oidc_providers (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        provider text NOT NULL CHECK (provider IN ${PROVIDERS}),
        display_name text NOT NULL,
        issuer text NOT NULL,
        client_id text NOT NULL,
        client_secret_encrypted text,
        scopes text[] NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        authorization_endpoint text,
        token_endpoint text,
        userinfo_endpoint text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT oidc_providers_provider_uq UNIQUE (provider)
      )`);

    await q.query(`
      CREATE TABLE oauth_connections (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        provider text NOT NULL CHECK (provider IN ${PROVIDERS}),
        subject text NOT NULL,
        email text,
        display_name text,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_login_at timestamptz,
        CONSTRAINT oauth_connections_subject_uq UNIQUE (provider, subject),
        CONSTRAINT oauth_connections_user_uq UNIQUE (user_id, provider)
      )`);

    await q.query(`
      CREATE TABLE oauth_login_states (
        state text PRIMARY KEY,
        provider text NOT NULL CHECK (provider IN ${PROVIDERS}),
        code_verifier text NOT NULL,
        nonce text NOT NULL,
        redirect_uri text NOT NULL,
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX oauth_login_states_user_idx ON oauth_login_states (user_id, provider, created_at DESC)`,
    );

    // Secrets the service generates for itself (the encryption key when ENCRYPTION_KEY is unset).
    await q.query(`
      CREATE TABLE identity_secrets (
        name text PRIMARY KEY,
        value text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'identity_secrets',
      'oauth_login_states',
      'oauth_connections',
      'oidc_providers',
      'oauth_authorization_codes',
      'oauth_clients',
      'api_key_usage',
      'api_keys',
      'login_challenges',
      'backup_codes',
      'user_two_factor',
      'one_time_codes',
      'login_failures',
      'spent_refresh_tokens',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
    await q.query(`DROP INDEX IF EXISTS sessions_client_idx`);
    await q.query(`ALTER TABLE sessions DROP COLUMN auth_method, DROP COLUMN scope, DROP COLUMN client_id`);
  }
}
