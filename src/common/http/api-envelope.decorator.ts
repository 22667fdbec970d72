import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorCode } from '../errors/error-code.js';

const messageSchema = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'Language code (ISO 639-1) to text',
  example: { en: 'OK', zh: '成功' },
};

function envelopeSchema(payload: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'object',
    required: ['success', 'message', 'payload'],
    properties: { success: { type: 'boolean', example: true }, message: messageSchema, payload },
  };
}

function payloadSchema(
  model: Type<unknown> | null,
  shape: 'one' | 'page' | 'array' | 'cursor',
  alternatives: Type<unknown>[] = [],
): Record<string, unknown> {
  const item = model ? { $ref: getSchemaPath(model) } : { type: 'object', nullable: true };
  switch (shape) {
    case 'one':
      return alternatives.length > 0 ? { oneOf: [item, ...alternatives.map((other) => ({ $ref: getSchemaPath(other) }))] } : item;
    case 'array':
      return { type: 'array', items: item };
    case 'page':
      return {
        type: 'object',
        required: ['items', 'page', 'pageSize', 'total', 'totalPages'],
        properties: {
          items: { type: 'array', items: item },
          page: { type: 'integer', example: 1 },
          pageSize: { type: 'integer', example: 20 },
          total: { type: 'integer' },
          totalPages: { type: 'integer' },
        },
      };
    case 'cursor':
      return {
        type: 'object',
        required: ['items', 'limit', 'nextCursor'],
        properties: {
          items: { type: 'array', items: item },
          limit: { type: 'integer' },
          nextCursor: { type: 'string', nullable: true },
        },
      };
  }
}

/**
 * Any JSON value (string, number, boolean, object or array), for properties answered as given (a field's
 * defaultValue in its lenient form, an aggregate). `{type: object}`, what @nestjs/swagger makes of `unknown`,
 * makes a generated client refuse a number or a string. Add `nullable: true` where null is answered too.
 */
export const ANY_JSON_SCHEMA = {
  oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'object' }, { type: 'array', items: {} }],
};

/** A validation rule's own message of a value problem (the field's `validations[].message`, a language map). */
const DETAIL_MESSAGE_SCHEMA = { type: 'object', additionalProperties: { type: 'string' }, description: "The failed rule's own message, by language" };

/** The schema of a failure envelope, shared by every documented error response. */
export const ERROR_ENVELOPE_SCHEMA = {
  type: 'object',
  required: ['success', 'code', 'message', 'payload'],
  properties: {
    success: { type: 'boolean', example: false },
    code: { type: 'string', enum: Object.values(ErrorCode) },
    message: messageSchema,
    payload: { type: 'object', nullable: true },
    details: {
      type: 'object',
      description:
        'The problem as {field, reason} (spec 7); with several problems, `errors` lists them all, the first repeated at the top; `rowId` names the row of a bulk write',
      properties: {
        field: { type: 'string' },
        fieldId: { type: 'string' },
        rowId: { type: 'string' },
        reason: { type: 'string' },
        message: DETAIL_MESSAGE_SCHEMA,
        errors: {
          type: 'array',
          items: {
            type: 'object',
            properties: { field: { type: 'string' }, fieldId: { type: 'string' }, rowId: { type: 'string' }, reason: { type: 'string' }, message: DETAIL_MESSAGE_SCHEMA },
            additionalProperties: true,
          },
        },
      },
      additionalProperties: true,
    },
  },
};

/**
 * Documents an operation's success response as the envelope around `model`.
 * `shape`: one object, a page (`items, page, pageSize, total, totalPages`), a cursor page, or an array.
 * `oneOf`: other models the payload may be instead of `model` (shape `one` only), as the query decides.
 */
export function ApiEnvelope(
  model: Type<unknown> | null,
  options: { shape?: 'one' | 'page' | 'array' | 'cursor'; status?: number; description?: string; oneOf?: Type<unknown>[] } = {},
): MethodDecorator & ClassDecorator {
  const alternatives = options.oneOf ?? [];
  const decorators = [
    ApiResponse({
      status: options.status ?? 200,
      description: options.description ?? 'Success',
      schema: envelopeSchema(payloadSchema(model, options.shape ?? 'one', alternatives)),
    }),
    ApiResponse({ status: 400, description: 'VALIDATION_ERROR', schema: ERROR_ENVELOPE_SCHEMA }),
  ];
  const models = [...(model ? [model] : []), ...alternatives];
  return applyDecorators(...(models.length > 0 ? [ApiExtraModels(...models)] : []), ...decorators);
}
