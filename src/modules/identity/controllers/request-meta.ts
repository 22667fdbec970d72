import type { Request } from 'express';
import type { ClientMeta } from '../services/session.service.js';

/** The caller's user agent and address, recorded on sessions and used by the sign-in throttle. */
export function metaOf(request: Request): ClientMeta {
  return { userAgent: request.headers['user-agent'], ip: request.ip };
}
