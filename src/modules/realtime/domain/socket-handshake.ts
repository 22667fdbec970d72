import { isUUID } from 'class-validator';
import type { CloseReason } from './realtime-protocol.js';
import { type ParseResult, TOKEN_REQUIRED } from './realtime-messages.js';

export interface HandshakeDetail {
  field: string;
  reason: string;
  [extra: string]: unknown;
}

/** Why a first message cannot open the session: the error to answer and the close reason. */
export interface HandshakeRefusal {
  ok: false;
  seq: number | null;
  /** VALIDATION_ERROR for a malformed message (4400); UNAUTHORIZED for a missing or empty token (4401). */
  code: 'VALIDATION_ERROR' | 'UNAUTHORIZED';
  close: CloseReason;
  details: HandshakeDetail[];
}

/** The `Bearer` scheme (RFC 6750, case-insensitive) in front of a token. */
const BEARER_SCHEME = /^Bearer(?:\s+|$)/i;
const FIRST_MESSAGE = 'the first message must be {kind: "auth", seq, payload: {token}}';

function malformed(seq: number | null, details: HandshakeDetail[]): HandshakeRefusal {
  return { ok: false, seq, code: 'VALIDATION_ERROR', close: 'BAD_HANDSHAKE', details };
}

/**
 * A socket's first frame (`parsed` is null for a binary frame): the `auth` message's seq and token, or why it
 * cannot open the session. The details are the parser's own (seq, an extra key, payload.token …), so a client
 * learns what to fix; a message of another kind is told that `auth` comes first; a missing or empty token is
 * UNAUTHORIZED with close 4401, as every missing credential.
 */
export function readHandshake(
  parsed: ParseResult | null,
): { ok: true; seq: number; token: string } | HandshakeRefusal {
  if (parsed === null) {
    return malformed(null, [{ field: 'message', reason: `${FIRST_MESSAGE}, as a JSON text frame` }]);
  }
  if (parsed.ok) {
    if (parsed.message.kind !== 'auth') {
      return malformed(parsed.message.seq, [{ field: 'kind', reason: FIRST_MESSAGE }]);
    }
    // Spec 4.5 calls the token "a bearer token": one sent as an Authorization header value ("Bearer <token>") is
    // the same token.
    const token = parsed.message.payload.token.replace(BEARER_SCHEME, '');
    return token === ''
      ? { ok: false, seq: parsed.message.seq, code: 'UNAUTHORIZED', close: 'UNAUTHENTICATED', details: [{ field: 'payload.token', reason: TOKEN_REQUIRED }] }
      : { ok: true, seq: parsed.message.seq, token };
  }
  const unreadable = parsed.details.some((detail) => detail.field === 'message');
  if (!unreadable && parsed.kind !== 'auth') {
    return malformed(parsed.seq, [{ field: 'kind', reason: FIRST_MESSAGE }]);
  }
  const [only] = parsed.details;
  if (parsed.details.length === 1 && only.field === 'payload.token' && only.reason === TOKEN_REQUIRED) {
    return { ok: false, seq: parsed.seq, code: 'UNAUTHORIZED', close: 'UNAUTHENTICATED', details: [only] };
  }
  return malformed(parsed.seq, parsed.details);
}

/** The document and context a socket URL names (`wsUrl`'s query), each at most once. */
export interface SocketTarget {
  docType?: string;
  docId?: string;
  workspaceId?: string;
  organizationId?: string;
}

/**
 * Reads the query of the socket URL like the HTTP routes read theirs: each parameter at most once, and the
 * context ids UUIDs (lower-cased). Other parameters are left alone (providers may add their own).
 */
export function readSocketTarget(url: URL): { target: SocketTarget; details: HandshakeDetail[] } {
  const target: SocketTarget = {};
  const details: HandshakeDetail[] = [];
  for (const name of ['docType', 'docId', 'workspaceId', 'organizationId'] as const) {
    const values = url.searchParams.getAll(name);
    if (values.length > 1) {
      details.push({ field: name, reason: `${name} must be given once` });
      continue;
    }
    const [value] = values;
    if (value === undefined) {
      continue;
    }
    if (name === 'workspaceId' || name === 'organizationId') {
      if (!isUUID(value)) {
        details.push({ field: name, reason: `${name} must be a UUID` });
        continue;
      }
      target[name] = value.toLowerCase();
    } else {
      target[name] = value;
    }
  }
  return { target, details };
}
