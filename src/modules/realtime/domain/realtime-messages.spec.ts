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
  ])('refuses %s', (raw, seq, field) => {
    const result = parseClientMessage(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.seq).toBe(seq);
      expect(result.details.map((detail) => detail.field)).toContain(field);
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
