import { SUCCESS_MESSAGE } from '../../../../common/i18n/error-messages.js';

/** A standard protocol body that is also the service envelope (see docs/auth.md, "Token response format"). */
export type Hybrid<T> = T & { success: true; message: Record<string, string>; payload: T };

/**
 * The issuer endpoints answer standard clients (OAuth 2.0, OpenID Connect, JWKS) and envelope clients with
 * one body: the protocol fields at the top level, plus `success`, `message` and `payload` (the same fields
 * again). Standard clients ignore members they do not know; envelope clients read `payload`.
 */
export function hybrid<T extends object>(fields: T): Hybrid<T> {
  return { ...fields, success: true, message: SUCCESS_MESSAGE, payload: fields };
}

/** OpenAPI schema of a hybrid body whose protocol fields are `properties`. */
export function hybridSchema(
  properties: Record<string, unknown>,
  required: string[],
): Record<string, unknown> {
  const fields = { type: 'object', properties, required };
  return {
    type: 'object',
    required: ['success', 'message', 'payload', ...required],
    properties: {
      ...properties,
      success: { type: 'boolean', example: true },
      message: {
        type: 'object',
        additionalProperties: { type: 'string' },
        example: { en: 'OK', zh: '成功' },
      },
      payload: fields,
    },
  };
}
