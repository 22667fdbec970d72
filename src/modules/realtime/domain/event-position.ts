import type { StreamEvent } from './realtime.types.js';

/**
 * Where an event stands in its document's stream: the transaction that wrote it (outbox `tx_id`, an xid8), then its
 * outbox sequence number. Events are numbered when recorded but commit in another order; read only once every
 * transaction up to theirs has ended (below the snapshot's xmin), in this order, no event can later appear before a
 * position a client has passed (docs/realtime.md, "Order and resume").
 */
export interface EventPosition {
  tx: bigint;
  seq: bigint;
}

/** Before every event (events recorded before positions existed read as transaction 0). */
export const START_POSITION: EventPosition = { tx: 0n, seq: 0n };

/** An event with its position (the position stays on the server: the stream's `id:` is the event's `seq`). */
export interface PositionedEvent {
  event: StreamEvent;
  position: EventPosition;
}

/** Negative, zero or positive as `a` is before, at or after `b`. */
export function comparePositions(a: EventPosition, b: EventPosition): number {
  if (a.tx !== b.tx) {
    return a.tx < b.tx ? -1 : 1;
  }
  return a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0;
}

export function earliestPosition(positions: readonly EventPosition[]): EventPosition {
  return positions.reduce((min, each) => (comparePositions(each, min) < 0 ? each : min), positions[0]);
}
