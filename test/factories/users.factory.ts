import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { App } from 'supertest/types.js';

export interface TestUser {
  id: string;
  email: string;
  password: string;
  displayName: string;
  token: string;
  refreshToken: string;
  sessionId: string;
  defaultOrganizationId: string;
  defaultWorkspaceId: string;
}

/** Registers a new user through the API and returns it with its access token. */
export async function registerUser(http: App, overrides: Partial<{ email: string; password: string; displayName: string }> = {}): Promise<TestUser> {
  const email = overrides.email ?? `user-${randomUUID().slice(0, 8)}@example.test`;
  const password = overrides.password ?? 'correct horse battery staple';
  const displayName = overrides.displayName ?? `User ${email.split('@')[0]}`;
  const response = await request(http).post('/api/v1/auth/register').send({ email, password, displayName });
  if (response.status !== 201) {
    throw new Error(`register failed: ${response.status} ${JSON.stringify(response.body)}`);
  }
  const payload = response.body.payload;
  return {
    id: payload.user.id,
    email,
    password,
    displayName,
    token: payload.accessToken,
    refreshToken: payload.refreshToken,
    sessionId: payload.sessionId,
    defaultOrganizationId: payload.user.defaultOrganizationId,
    defaultWorkspaceId: payload.user.defaultWorkspaceId,
  };
}

export function bearer(user: { token: string }): { Authorization: string } {
  return { Authorization: `Bearer ${user.token}` };
}
