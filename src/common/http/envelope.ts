import type { ErrorCode } from '../errors/error-code.js';
import type { ErrorDetail } from '../errors/app.exception.js';

/** The response envelope of spec section 1: every answer under /api/v1 has this shape. */
export interface Envelope<T> {
  success: boolean;
  code?: ErrorCode;
  message: Record<string, string>;
  payload: T | null;
  details?: ErrorDetail[];
}
