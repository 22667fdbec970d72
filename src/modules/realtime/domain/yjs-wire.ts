import * as decoding from 'lib0/decoding';
import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';

/**
 * The binary framing of standard Yjs providers (y-protocols, as y-websocket speaks it), so a stock client can
 * join after its `auth` message: a frame is `varUint messageType` then the message. Sync messages are
 * `varUint step` + `varUint8Array body`; awareness messages are one `varUint8Array` awareness update.
 */
export const MESSAGE_SYNC = 0;
export const MESSAGE_AWARENESS = 1;
export const SYNC_STEP1 = 0;
export const SYNC_STEP2 = 1;
export const SYNC_UPDATE = 2;

export type BinaryFrame =
  | { type: 'sync-step1'; stateVector: Uint8Array }
  | { type: 'update'; update: Uint8Array }
  | { type: 'awareness'; update: Uint8Array };

/** Decodes one binary frame; throws on anything malformed or of an unknown type. */
export function decodeFrame(data: Uint8Array): BinaryFrame {
  const decoder = decoding.createDecoder(data);
  const messageType = decoding.readVarUint(decoder);
  if (messageType === MESSAGE_AWARENESS) {
    return { type: 'awareness', update: decoding.readVarUint8Array(decoder) };
  }
  if (messageType !== MESSAGE_SYNC) {
    throw new Error(`unknown message type ${messageType}`);
  }
  const step = decoding.readVarUint(decoder);
  const body = decoding.readVarUint8Array(decoder);
  if (step === SYNC_STEP1) {
    return { type: 'sync-step1', stateVector: body };
  }
  if (step === SYNC_STEP2 || step === SYNC_UPDATE) {
    return { type: 'update', update: body };
  }
  throw new Error(`unknown sync step ${step}`);
}

/**
 * Whether an update carries nothing (no structs, no deletions): the sync step 2 a stock provider answers the
 * server's step 1 with when it has nothing the server lacks — what every read-only client sends on connect.
 * A malformed update is not "empty": it is left for the write path to refuse.
 */
export function isEmptyUpdate(update: Uint8Array): boolean {
  // An empty update is two bytes (no struct groups, no deletions); anything much longer has content: not decoded
  // twice on the write path.
  if (update.length > 8) {
    return false;
  }
  try {
    const { structs, ds } = Y.decodeUpdate(update);
    return structs.length === 0 && ds.clients.size === 0;
  } catch {
    return false;
  }
}

export function encodeSync(step: number, body: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, MESSAGE_SYNC);
  encoding.writeVarUint(encoder, step);
  encoding.writeVarUint8Array(encoder, body);
  return encoding.toUint8Array(encoder);
}

export function encodeAwarenessFrame(update: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, MESSAGE_AWARENESS);
  encoding.writeVarUint8Array(encoder, update);
  return encoding.toUint8Array(encoder);
}

/**
 * Deepest nesting an awareness state may have (cursors, selections and user info are a few levels deep). A state
 * nested thousands of levels deep parses, but re-encoding it for the other clients (JSON.stringify) and storing it
 * with the presence row (jsonb) overflow the stack: it is refused as malformed instead.
 */
export const AWARENESS_STATE_MAX_DEPTH = 64;

/** Whether `value` nests no deeper than `max` objects/arrays (walked without recursion). */
function nestsWithin(value: unknown, max: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const next = pending.pop() as { value: unknown; depth: number };
    if (next.value === null || typeof next.value !== 'object') {
      continue;
    }
    if (next.depth >= max) {
      return false;
    }
    for (const child of Object.values(next.value)) {
      pending.push({ value: child, depth: next.depth + 1 });
    }
  }
  return true;
}

export interface AwarenessEntry {
  clientId: number;
  clock: number;
  /** null: the client left. */
  state: Record<string, unknown> | null;
}

/** Reads a y-protocols awareness update (`varUint count`, then `clientID, clock, JSON state` each). */
export function decodeAwareness(update: Uint8Array): AwarenessEntry[] {
  const decoder = decoding.createDecoder(update);
  const count = decoding.readVarUint(decoder);
  if (count > 1000) {
    throw new Error('too many awareness entries');
  }
  const entries: AwarenessEntry[] = [];
  for (let index = 0; index < count; index += 1) {
    const clientId = decoding.readVarUint(decoder);
    const clock = decoding.readVarUint(decoder);
    const parsed: unknown = JSON.parse(decoding.readVarString(decoder));
    if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) {
      throw new Error('awareness state must be an object or null');
    }
    if (!nestsWithin(parsed, AWARENESS_STATE_MAX_DEPTH)) {
      throw new Error(`awareness state nested deeper than ${AWARENESS_STATE_MAX_DEPTH} levels`);
    }
    entries.push({ clientId, clock, state: parsed as Record<string, unknown> | null });
  }
  return entries;
}

export function encodeAwareness(entries: AwarenessEntry[]): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, entries.length);
  for (const entry of entries) {
    encoding.writeVarUint(encoder, entry.clientId);
    encoding.writeVarUint(encoder, entry.clock);
    encoding.writeVarString(encoder, JSON.stringify(entry.state));
  }
  return encoding.toUint8Array(encoder);
}

/** Throws when `update` is not a well-formed Yjs update (checked before it is stored or relayed). */
export function assertYjsUpdate(update: Uint8Array): void {
  if (update.length === 0) {
    throw new Error('empty update');
  }
  Y.decodeUpdate(update);
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

export function fromBase64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64'));
}
