import * as Y from 'yjs';
import {
  decodeAwareness,
  decodeFrame,
  encodeAwareness,
  encodeAwarenessFrame,
  encodeSync,
  SYNC_STEP1,
  SYNC_UPDATE,
} from './yjs-wire.js';
import { formatSse } from '../services/event-stream.service.js';

describe('y-protocols framing', () => {
  it('round-trips sync and awareness frames', () => {
    const doc = new Y.Doc();
    doc.getText('t').insert(0, 'hi');
    const update = Y.encodeStateAsUpdate(doc);
    expect(decodeFrame(encodeSync(SYNC_UPDATE, update))).toEqual({ type: 'update', update });
    const sv = Y.encodeStateVector(doc);
    expect(decodeFrame(encodeSync(SYNC_STEP1, sv))).toEqual({ type: 'sync-step1', stateVector: sv });
    const awareness = encodeAwareness([
      { clientId: 5, clock: 2, state: { cursor: 1 } },
      { clientId: 6, clock: 1, state: null },
    ]);
    expect(decodeFrame(encodeAwarenessFrame(awareness))).toEqual({ type: 'awareness', update: awareness });
    expect(decodeAwareness(awareness)).toEqual([
      { clientId: 5, clock: 2, state: { cursor: 1 } },
      { clientId: 6, clock: 1, state: null },
    ]);
  });

  it('refuses malformed frames', () => {
    expect(() => decodeFrame(new Uint8Array([7, 0]))).toThrow();
    expect(() => decodeFrame(new Uint8Array([0, 9, 0]))).toThrow();
    expect(() => decodeAwareness(new Uint8Array([1, 1, 1, 3, 0x5b, 0x31, 0x5d]))).toThrow();
  });
});

describe('server-sent event framing', () => {
  it('writes id, event and one data line per line of JSON', () => {
    expect(formatSse({ id: '7', event: 'request_merged', data: { a: 'x\ny' } })).toBe(
      'id: 7\nevent: request_merged\ndata: {"a":"x\\ny"}\n\n',
    );
    expect(formatSse({ data: 1 })).toBe('data: 1\n\n');
  });
});
