import { isLockTargetType, LOCK_TARGET_ID, LOCK_TARGET_TYPES, lockTargetIdProblems, type LockTargetInput } from './lock-targets.js';
import { assertNever } from '../../../common/assert-never.js';

/**
 * The socket's message protocol: every frame is JSON `{kind, seq, payload}`. A client numbers its messages with
 * `seq`; the server answers each with `ack` or `error` carrying the same `seq`. Messages the server pushes on
 * its own (`event`, `yjs_update`, `awareness`, `presence`, `lock_changed`, `closing`) have no `seq`.
 * REALTIME_MESSAGE_SCHEMA is what GET /realtime/messages/schema serves; parseClientMessage enforces the same rules.
 */
export const CLIENT_KINDS = [
  'auth',
  'ping',
  'yjs_sync',
  'yjs_update',
  'awareness',
  'lock',
  'unlock',
  'users',
  'locks',
] as const;
export const SERVER_KINDS = [
  'ack',
  'error',
  'event',
  'yjs_update',
  'awareness',
  'presence',
  'lock_changed',
  'closing',
] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];
export type ServerKind = (typeof SERVER_KINDS)[number];

export type ClientMessage =
  | { kind: 'auth'; seq: number; payload: { token: string } }
  | { kind: 'ping'; seq: number; payload: Record<string, never> }
  | { kind: 'yjs_sync'; seq: number; payload: { stateVector?: string } }
  | { kind: 'yjs_update'; seq: number; payload: { update: string } }
  | { kind: 'awareness'; seq: number; payload: { update: string } }
  | {
      kind: 'lock';
      seq: number;
      payload: { target: LockTargetInput; ttlSeconds?: number; exclusive?: boolean };
    }
  | { kind: 'unlock'; seq: number; payload: { lockId: string } }
  | { kind: 'users'; seq: number; payload: Record<string, never> }
  | { kind: 'locks'; seq: number; payload: Record<string, never> };

export interface ParseFailure {
  ok: false;
  seq: number | null;
  /** The message's kind when it names a known one (the handshake tells "not auth" from "a bad auth"). */
  kind?: ClientKind;
  details: Array<{ field: string; reason: string }>;
}

/** Kinds whose payload has a required property: the payload itself is required. Others may leave it out. */
export const PAYLOAD_REQUIRED: ReadonlySet<ClientKind> = new Set([
  'auth',
  'yjs_update',
  'awareness',
  'lock',
  'unlock',
]);

/** The reason of an `auth` message without a token (or an empty one): the handshake closes 4401, not 4400. */
export const TOKEN_REQUIRED = 'token is required';
const MAX_TOKEN_LENGTH = 8192;

export type ParseResult = { ok: true; message: ClientMessage } | ParseFailure;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function base64Field(payload: Json, name: string, required: boolean, details: ParseFailure['details']): void {
  const value = payload[name];
  if (value === undefined && !required) {
    return;
  }
  if (typeof value !== 'string' || value.length % 4 !== 0 || !BASE64.test(value)) {
    details.push({ field: `payload.${name}`, reason: `${name} must be base64` });
  }
}

function onlyKeys(payload: Json, allowed: string[], details: ParseFailure['details']): void {
  for (const key of Object.keys(payload)) {
    if (!allowed.includes(key)) {
      details.push({ field: `payload.${key}`, reason: `property ${key} should not exist` });
    }
  }
}

function lockTarget(value: unknown, details: ParseFailure['details']): void {
  if (!isObject(value) || typeof value.type !== 'string' || !isLockTargetType(value.type)) {
    details.push({
      field: 'payload.target.type',
      reason: `type must be one of ${LOCK_TARGET_TYPES.join(', ')}`,
    });
    return;
  }
  for (const problem of lockTargetIdProblems({ type: value.type, rowId: value.rowId, fieldId: value.fieldId })) {
    details.push({ field: `payload.target.${problem.key}`, reason: problem.reason });
  }
  // As the HTTP body's whitelist: a misspelt id key is refused, not ignored.
  for (const key of Object.keys(value)) {
    if (!['type', 'rowId', 'fieldId'].includes(key)) {
      details.push({ field: `payload.target.${key}`, reason: `property ${key} should not exist` });
    }
  }
}

function payloadDetails(kind: ClientKind, payload: Json): ParseFailure['details'] {
  const details: ParseFailure['details'] = [];
  switch (kind) {
    case 'auth':
      onlyKeys(payload, ['token'], details);
      if (payload.token === undefined || payload.token === '') {
        details.push({ field: 'payload.token', reason: TOKEN_REQUIRED });
      } else if (typeof payload.token !== 'string') {
        details.push({ field: 'payload.token', reason: 'token must be a string' });
      } else if (payload.token.length > MAX_TOKEN_LENGTH) {
        details.push({
          field: 'payload.token',
          reason: `token must be at most ${MAX_TOKEN_LENGTH} characters`,
        });
      }
      break;
    case 'ping':
    case 'users':
    case 'locks':
      onlyKeys(payload, [], details);
      break;
    case 'yjs_sync':
      onlyKeys(payload, ['stateVector'], details);
      base64Field(payload, 'stateVector', false, details);
      break;
    case 'yjs_update':
    case 'awareness':
      onlyKeys(payload, ['update'], details);
      base64Field(payload, 'update', true, details);
      break;
    case 'lock':
      onlyKeys(payload, ['target', 'ttlSeconds', 'exclusive'], details);
      lockTarget(payload.target, details);
      if (
        payload.ttlSeconds !== undefined &&
        (!Number.isInteger(payload.ttlSeconds) || (payload.ttlSeconds as number) < 1)
      ) {
        details.push({ field: 'payload.ttlSeconds', reason: 'ttlSeconds must be a positive integer' });
      }
      if (payload.exclusive !== undefined && typeof payload.exclusive !== 'boolean') {
        details.push({ field: 'payload.exclusive', reason: 'exclusive must be a boolean' });
      }
      break;
    case 'unlock':
      onlyKeys(payload, ['lockId'], details);
      if (typeof payload.lockId !== 'string' || !UUID.test(payload.lockId)) {
        details.push({ field: 'payload.lockId', reason: 'lockId must be a UUID' });
      }
      break;
    default:
      return assertNever(kind);
  }
  return details;
}

/** Parses one text frame. Never throws: a bad frame yields the details of what is wrong (and its seq, when readable). */
export function parseClientMessage(raw: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, seq: null, details: [{ field: 'message', reason: 'message must be JSON' }] };
  }
  if (!isObject(value)) {
    return {
      ok: false,
      seq: null,
      details: [{ field: 'message', reason: 'message must be an object {kind, seq, payload}' }],
    };
  }
  const seq = Number.isSafeInteger(value.seq) && (value.seq as number) >= 0 ? (value.seq as number) : null;
  const details: ParseFailure['details'] = [];
  if (seq === null) {
    details.push({ field: 'seq', reason: 'seq must be a non-negative integer' });
  }
  for (const key of Object.keys(value)) {
    if (!['kind', 'seq', 'payload'].includes(key)) {
      details.push({ field: key, reason: `property ${key} should not exist` });
    }
  }
  const kind = value.kind;
  if (typeof kind !== 'string' || !(CLIENT_KINDS as readonly string[]).includes(kind)) {
    details.push({ field: 'kind', reason: `kind must be one of ${CLIENT_KINDS.join(', ')}` });
    return { ok: false, seq, details };
  }
  const known = kind as ClientKind;
  // An auth message without a payload lacks its token: reported as such, so the handshake answers it like `{}`.
  if (value.payload === undefined && PAYLOAD_REQUIRED.has(known) && known !== 'auth') {
    details.push({ field: 'payload', reason: 'payload is required' });
    return { ok: false, seq, kind: known, details };
  }
  const payload = value.payload === undefined ? {} : value.payload;
  if (!isObject(payload)) {
    details.push({ field: 'payload', reason: 'payload must be an object' });
    return { ok: false, seq, kind: known, details };
  }
  details.push(...payloadDetails(known, payload));
  if (details.length > 0 || seq === null) {
    return { ok: false, seq, kind: known, details };
  }
  return { ok: true, message: { kind, seq, payload } as ClientMessage };
}

const base64 = { type: 'string', contentEncoding: 'base64' } as const;
const empty = { type: 'object', additionalProperties: false, properties: {} } as const;

/** A client message; `payload` is required where it has a required property (PAYLOAD_REQUIRED), else optional. */
function clientMessage(kind: ClientKind, payload: Json, description: string): Json {
  return {
    type: 'object',
    description,
    required: PAYLOAD_REQUIRED.has(kind) ? ['kind', 'seq', 'payload'] : ['kind', 'seq'],
    additionalProperties: false,
    properties: { kind: { const: kind }, seq: { type: 'integer', minimum: 0 }, payload },
  };
}

/**
 * A server message. `seq`: the replies (ack, error) echo the client message's, `nullable` for an error to a frame
 * that could not be read; pushed messages have none, which also keeps them from matching a client message of the
 * same kind (awareness, yjs_update) in the schema's `oneOf`.
 */
function serverMessage(kind: ServerKind, payload: Json, description: string, seq: 'none' | 'integer' | 'nullable' = 'none'): Json {
  return {
    type: 'object',
    description,
    required: seq === 'none' ? ['kind', 'payload'] : ['kind', 'seq', 'payload'],
    additionalProperties: false,
    properties: {
      kind: { const: kind },
      ...(seq === 'none' ? {} : { seq: { type: seq === 'nullable' ? ['integer', 'null'] : 'integer', minimum: 0 } }),
      payload,
    },
  };
}

const lockTargetSchema = {
  type: 'object',
  required: ['type'],
  additionalProperties: false,
  properties: {
    type: { enum: [...LOCK_TARGET_TYPES] },
    rowId: { type: 'string', pattern: LOCK_TARGET_ID.source },
    fieldId: { type: 'string', pattern: LOCK_TARGET_ID.source },
  },
  description: 'row: rowId; field: fieldId; cell: rowId and fieldId; document: neither.',
};

/** JSON Schema (2020-12) of every message kind, both directions. */
export const REALTIME_MESSAGE_SCHEMA: Json = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:quire:realtime:messages:v1',
  title: 'Quire realtime socket messages',
  description:
    'Frames are JSON text {kind, seq, payload}. The first client message must be auth. Every client message is ' +
    'answered by ack or error with the same seq. Binary frames carry standard y-protocols sync/awareness messages.',
  $defs: {
    client: {
      auth: clientMessage(
        'auth',
        {
          type: 'object',
          required: ['token'],
          additionalProperties: false,
          properties: { token: { type: 'string', minLength: 1 } },
        },
        'First message: a bearer token or the token from /connect. ack payload: {sessionId, userId, document ' +
          '{docType, docId, organizationId, workspaceId}, canWrite, lastEventId}.',
      ),
      ping: clientMessage('ping', empty, 'Keep-alive; ack payload {now}.'),
      yjs_sync: clientMessage(
        'yjs_sync',
        { type: 'object', additionalProperties: false, properties: { stateVector: base64 } },
        'Ask for the Yjs state the client lacks; ack payload {update, stateVector} (base64 Yjs update).',
      ),
      yjs_update: clientMessage(
        'yjs_update',
        { type: 'object', required: ['update'], additionalProperties: false, properties: { update: base64 } },
        'A Yjs update (Y.encodeStateAsUpdate / doc.on("update")); needs write access.',
      ),
      awareness: clientMessage(
        'awareness',
        { type: 'object', required: ['update'], additionalProperties: false, properties: { update: base64 } },
        'A y-protocols awareness update (encodeAwarenessUpdate).',
      ),
      lock: clientMessage(
        'lock',
        {
          type: 'object',
          required: ['target'],
          additionalProperties: false,
          properties: {
            target: lockTargetSchema,
            ttlSeconds: { type: 'integer', minimum: 1 },
            exclusive: { type: 'boolean', default: true },
          },
        },
        'Take a lock bound to this session; ack payload is the lock.',
      ),
      unlock: clientMessage(
        'unlock',
        {
          type: 'object',
          required: ['lockId'],
          additionalProperties: false,
          properties: { lockId: { type: 'string', format: 'uuid' } },
        },
        'Release an own lock.',
      ),
      users: clientMessage('users', empty, 'ack payload: the online users (as GET .../users).'),
      locks: clientMessage('locks', empty, 'ack payload: the live locks (as GET .../locks).'),
    },
    server: {
      ack: serverMessage(
        'ack',
        { type: 'object' },
        'Success reply to the client message with the same seq.',
        'integer',
      ),
      error: serverMessage(
        'error',
        {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string', description: 'An error code of docs/errors.md' },
            message: { type: 'object', additionalProperties: { type: 'string' } },
            details: { type: 'object', description: 'As in HTTP error envelopes: {field, reason}, with errors[] when there are several' },
            payload: {},
          },
        },
        'Failure reply; seq is null when the frame was unreadable.',
        'nullable',
      ),
      event: serverMessage(
        'event',
        {
          type: 'object',
          required: ['id', 'event', 'timestamp', 'payload'],
          properties: {
            id: { type: 'string', description: "The stream event id (orders the document's events)" },
            event: { type: 'string' },
            timestamp: { type: 'string', format: 'date-time' },
            docType: { type: 'string' },
            docId: { type: 'string' },
            triggeredBy: { type: ['string', 'null'] },
            payload: { type: 'object' },
          },
        },
        'A committed domain event of the document (spec 6.2 names and payloads).',
      ),
      yjs_update: serverMessage(
        'yjs_update',
        { type: 'object', required: ['update'], properties: { update: base64 } },
        'A Yjs update made by another session.',
      ),
      awareness: serverMessage(
        'awareness',
        { type: 'object', required: ['update'], properties: { update: base64 } },
        'An awareness update of another session.',
      ),
      presence: serverMessage(
        'presence',
        {
          type: 'object',
          required: ['action', 'sessionId', 'userId'],
          properties: {
            action: { enum: ['joined', 'left'] },
            sessionId: { type: 'string' },
            userId: { type: 'string' },
          },
        },
        'A session joined or left the document.',
      ),
      lock_changed: serverMessage(
        'lock_changed',
        {
          type: 'object',
          required: ['action', 'lock'],
          properties: { action: { enum: ['acquired', 'released'] }, lock: { type: 'object' } },
        },
        'A lock was taken or released (expired locks are dropped silently).',
      ),
      closing: serverMessage(
        'closing',
        {
          type: 'object',
          required: ['code', 'reason'],
          properties: { code: { type: 'integer' }, reason: { type: 'string' } },
        },
        'Sent right before the server closes the socket with `code`.',
      ),
    },
  },
  oneOf: [
    ...CLIENT_KINDS.map((kind) => ({ $ref: `#/$defs/client/${kind}` })),
    ...SERVER_KINDS.map((kind) => ({ $ref: `#/$defs/server/${kind}` })),
  ],
};
