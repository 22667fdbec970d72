import { eventIdProblem } from './event-id.js';
import { lockTargetFieldProblem } from './lock-targets.js';
import { parseClientMessage } from './realtime-messages.js';
import { readHandshake, readSocketTarget } from './socket-handshake.js';

const first = (frame: unknown): ReturnType<typeof readHandshake> =>
  readHandshake(parseClientMessage(typeof frame === 'string' ? frame : JSON.stringify(frame)));

describe('socket handshake', () => {
  it('reads a well-formed auth message', () => {
    expect(first({ kind: 'auth', seq: 1, payload: { token: 't' } })).toEqual({
      ok: true,
      seq: 1,
      token: 't',
    });
  });

  it('reads a token sent with its Bearer scheme as the token', () => {
    for (const token of ['Bearer t', 'bearer  t', 'BEARER t']) {
      expect(first({ kind: 'auth', seq: 2, payload: { token } })).toEqual({ ok: true, seq: 2, token: 't' });
    }
  });

  it.each([
    [{ kind: 'auth', seq: 1, payload: {} }],
    [{ kind: 'auth', seq: 1, payload: { token: '' } }],
    [{ kind: 'auth', seq: 1, payload: { token: 'Bearer ' } }],
    [{ kind: 'auth', seq: 1 }],
  ])('answers a missing token %j with UNAUTHORIZED and 4401', (frame) => {
    expect(first(frame)).toMatchObject({
      ok: false,
      seq: 1,
      code: 'UNAUTHORIZED',
      close: 'UNAUTHENTICATED',
      details: [{ field: 'payload.token', reason: 'token is required' }],
    });
  });

  it.each([
    [{ kind: 'auth', seq: '1', payload: { token: 't' } }, null, ['seq']],
    [{ kind: 'auth', payload: {} }, null, ['seq', 'payload.token']],
    [{ kind: 'auth', seq: 1, payload: { token: 't' }, x: 1 }, 1, ['x']],
    [{ kind: 'auth', seq: 1, payload: { token: 7 } }, 1, ['payload.token']],
    [{ kind: 'ping', seq: 4 }, 4, ['kind']],
    [{ kind: 'nope', seq: 4 }, 4, ['kind']],
    ['[1]', null, ['message']],
  ])('answers %j with the actual problem and 4400', (frame, seq, fields) => {
    const result = first(frame);
    expect(result).toMatchObject({ ok: false, seq, code: 'VALIDATION_ERROR', close: 'BAD_HANDSHAKE' });
    expect(result.ok ? [] : result.details.map((detail) => detail.field)).toEqual(fields);
  });

  it('refuses a binary first frame', () => {
    expect(readHandshake(null)).toMatchObject({
      ok: false,
      close: 'BAD_HANDSHAKE',
      details: [{ field: 'message' }],
    });
  });

  it('reads the socket URL like the HTTP query', () => {
    const id = '0b4ddbd8-59a1-4ad5-8a6c-3bfb0f6a4c31';
    expect(
      readSocketTarget(new URL(`ws://h/realtime/ws?docType=a&docId=b&workspaceId=${id.toUpperCase()}&x=1`)),
    ).toEqual({
      target: { docType: 'a', docId: 'b', workspaceId: id },
      details: [],
    });
    expect(
      readSocketTarget(new URL('ws://h/realtime/ws?workspaceId=zzz&organizationId=1&docId=a&docId=b'))
        .details,
    ).toEqual([
      { field: 'docId', reason: 'docId must be given once' },
      { field: 'workspaceId', reason: 'workspaceId must be a UUID' },
      { field: 'organizationId', reason: 'organizationId must be a UUID' },
    ]);
  });
});

describe('event ids and lock fields', () => {
  it.each([
    ['0', null],
    ['9223372036854775807', null],
    ['9223372036854775808', 'range'],
    ['9999999999999999999', 'range'],
    ['-1', 'range'],
    ['1.5', 'range'],
    [['1', '2'], 'once'],
  ])('event id %j', (value, problem) => {
    const reason = eventIdProblem('lastEventId', value);
    expect(reason === null ? null : reason.includes('once') ? 'once' : 'range').toBe(problem);
  });

  it('a field or cell lock names a field of the document; rows and documents are not checked', () => {
    const fields = ['name', 'qty'];
    expect(lockTargetFieldProblem({ type: 'field', fieldId: 'qty' }, fields)).toBeNull();
    expect(lockTargetFieldProblem({ type: 'cell', fieldId: 'nope' }, fields)?.key).toBe('fieldId');
    expect(lockTargetFieldProblem({ type: 'field', fieldId: 'nope' }, fields)?.key).toBe('fieldId');
    expect(lockTargetFieldProblem({ type: 'row' }, fields)).toBeNull();
    expect(lockTargetFieldProblem({ type: 'document' }, [])).toBeNull();
  });
});
