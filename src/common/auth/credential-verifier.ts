import type { Request } from 'express';
import type { Principal } from './principal.js';

/**
 * Turns a presented credential (a JWT access token or an API key) into a Principal, or throws
 * AppException UNAUTHORIZED / INVALID_TOKEN. Implemented by the identity module; the global guard only
 * knows this contract.
 */
export abstract class CredentialVerifier {
  abstract verify(credential: string, request: Request): Promise<Principal>;
}
