import { Ajv2020 } from 'ajv/dist/2020.js';
import {
  CLIENT_KINDS,
  parseClientMessage,
  REALTIME_MESSAGE_SCHEMA,
  SERVER_KINDS,
} from './realtime-messages.js';

describe('socket message parsing', () => {
  it('accepts every well-formed client kind', () => {
    const payloads: Record<string, unknown> = {
      auth: { token: 'x' },
      ping: {},
      yjs_sync: { stateVector: 'AA==' },
      yjs_update: { update: 'AAA=' },
      awareness: { update: 'AAA=' },
      lock: { target: { type: 'cell', rowId: 'r', fieldId: 'f' }, ttlSeconds: 5, exclusive: false },
      unlock: { lockId: '00000000-0000-4000-8000-000000000000' },
      users: {},
      locks: {},
    };
    for (const kind of CLIENT_KINDS) {
      const result = parseClientMessage(JSON.stringify({ kind, seq: 3, payload: payloads[kind] }));
      expect(result).toEqual({ ok: true, message: { kind, seq: 3, payload: payloads[kind] } });
    }
  });

  it.each([
    ['{oops', null, 'message'],
    ['[]', null, 'message'],
    ['{"kind":"ping","seq":-1}', null, 'seq'],
    ['{"kind":"fly","seq":1}', 1, 'kind'],
    ['{"kind":"ping","seq":1,"extra":true}', 1, 'extra'],
    ['{"kind":"auth","seq":2,"payload":{}}', 2, 'payload.token'],
    ['{"kind":"yjs_update","seq":2,"payload":{"update":"not base64"}}', 2, 'payload.update'],
    ['{"kind":"lock","seq":2,"payload":{"target":{"type":"row"}}}', 2, 'payload.target.rowId'],
    [
      '{"kind":"lock","seq":2,"payload":{"target":{"type":"document","rowId":"r"}}}',
      2,
      'payload.target.rowId',
    ],
    ['{"kind":"unlock","seq":2,"payload":{"lockId":"x"}}', 2, 'payload.lockId'],
    ['{"kind":"ping","seq":2,"payload":[]}', 2, 'payload'],
    ['{"kind":"awareness","seq":2}', 2, 'payload'],
    [
      '{"kind":"lock","seq":2,"payload":{"target":{"type":"row","rowId":"r","rowid":"s"}}}',
      2,
      'payload.target.rowid',
    ],
    ['{"kind":"ping","seq":2,"payload":{"constructor":1}}', 2, 'payload.constructor'],
    ['{"kind":"ping","seq":2,"__proto__":{}}', 2, '__proto__'],
    ['{"kind":"lock","seq":2}', 2, 'payload'],
  ])('refuses %s', (raw, seq, field) => {
    const result = parseClientMessage(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.seq).toBe(seq);
      expect(result.details.map((detail) => detail.field)).toContain(field);
    }
  });

  it('takes no payload where nothing in it is required, as the schema says', () => {
    for (const kind of ['ping', 'users', 'locks', 'yjs_sync']) {
      expect(parseClientMessage(JSON.stringify({ kind, seq: 1 }))).toEqual({
        ok: true,
        message: { kind, seq: 1, payload: {} },
      });
    }
  });

  it('has a schema the frames it describes validate against, each as exactly one kind', () => {
    const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(REALTIME_MESSAGE_SCHEMA);
    const update = Buffer.from([1, 2, 3]).toString('base64');
    const valid = [
      { kind: 'auth', seq: 0, payload: { token: 't' } },
      { kind: 'awareness', seq: 2, payload: { update } },
      { kind: 'yjs_update', seq: 3, payload: { update } },
      { kind: 'lock', seq: 4, payload: { target: { type: 'cell', rowId: 'r1', fieldId: 'f' } } },
      { kind: 'awareness', payload: { update } },
      { kind: 'yjs_update', payload: { update } },
      {
        kind: 'ack',
        seq: 0,
        payload: {
          sessionId: 's',
          userId: 'u',
          document: { docType: 'd', docId: 'x' },
          canWrite: true,
          lastEventId: '0',
        },
      },
      {
        kind: 'error',
        seq: null,
        payload: {
          code: 'VALIDATION_ERROR',
          message: { en: 'bad' },
          details: { field: 'message', reason: 'message must be JSON' },
        },
      },
      { kind: 'presence', payload: { action: 'joined', sessionId: 's', userId: 'u' } },
      { kind: 'ping', seq: 5 },
    ];
    for (const frame of valid) {
      expect([frame, validate(frame), validate.errors]).toEqual([frame, true, null]);
    }
    for (const frame of [
      { kind: 'ack', payload: {} },
      { kind: 'presence', seq: 1, payload: { action: 'joined', sessionId: 's', userId: 'u' } },
      { kind: 'ping', seq: -1, payload: {} },
      { kind: 'teleport', seq: 1, payload: {} },
      { kind: 'awareness', seq: 1 },
    ]) {
      expect([frame, validate(frame)]).toEqual([frame, false]);
    }
  });

  it('describes every kind in the schema', () => {
    const defs = REALTIME_MESSAGE_SCHEMA.$defs as {
      client: Record<string, unknown>;
      server: Record<string, unknown>;
    };
    expect(Object.keys(defs.client)).toEqual([...CLIENT_KINDS]);
    expect(Object.keys(defs.server)).toEqual([...SERVER_KINDS]);
  });
});
