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
): Record<string, unknown> {
  const item = model ? { $ref: getSchemaPath(model) } : { type: 'object', nullable: true };
  switch (shape) {
    case 'one':
      return item;
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
      description: 'The problem as {field, reason} (spec 7); with several problems, `errors` lists them all, the first repeated at the top',
      properties: {
        field: { type: 'string' },
        fieldId: { type: 'string' },
        reason: { type: 'string' },
        errors: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, fieldId: { type: 'string' }, reason: { type: 'string' } } },
        },
      },
    },
  },
};

/**
 * Documents an operation's success response as the envelope around `model`.
 * `shape`: one object, a page (`items, page, pageSize, total, totalPages`), a cursor page, or an array.
 */
export function ApiEnvelope(
  model: Type<unknown> | null,
  options: { shape?: 'one' | 'page' | 'array' | 'cursor'; status?: number; description?: string } = {},
): MethodDecorator & ClassDecorator {
  const decorators = [
    ApiResponse({
      status: options.status ?? 200,
      description: options.description ?? 'Success',
      schema: envelopeSchema(payloadSchema(model, options.shape ?? 'one')),
    }),
    ApiResponse({ status: 400, description: 'VALIDATION_ERROR', schema: ERROR_ENVELOPE_SCHEMA }),
  ];
  return applyDecorators(...(model ? [ApiExtraModels(model)] : []), ...decorators);
}
