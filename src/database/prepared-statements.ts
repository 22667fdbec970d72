import { createHash } from 'node:crypto';
import pg from 'pg';

/** SQL text → the name it is prepared under. Only texts passed to `prepared()`: static SQL, so the map is bounded. */
const statementNames = new Map<string, string>();

/**
 * Marks a hot, static statement to be prepared once per connection (docs/performance.md, "Third pass"):
 * later calls on that connection send only Bind/Execute, so PostgreSQL neither parses nor analyses it again.
 * Returns `text` unchanged, so a call site reads `query(prepared(\`…\`), params)`.
 *
 * Only for statements whose text never depends on input (interpolated constants are fine): every distinct text
 * stays prepared on every pooled connection. After five runs PostgreSQL may keep a generic plan, so only keyed
 * lookups and writes qualify; the query engine's filtered SQL is never prepared.
 */
export function prepared(text: string): string {
  if (!statementNames.has(text)) {
    // The name derives from the text: instances and connections agree, and two texts never share a name.
    statementNames.set(text, `quire_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`);
  }
  return text;
}

type QueryArgs = [config: unknown, values?: unknown, callback?: unknown];

interface WireConnection {
  stream: { cork(): void; uncork(): void };
  _send(buffer: Buffer): boolean;
}

/**
 * The pool's client class (`extra.Client`):
 * - a statement marked with `prepared()` is sent as a named statement; everything else as before;
 * - the protocol messages of one statement (Parse, Bind, Describe, Execute, Sync) leave in one socket write: `pg`
 *   writes each message on its own, a system call apiece, which cost more CPU than the read it served
 *   (docs/performance.md, "Third pass"). Writes of the same tick are corked and flushed on the next tick.
 */
export class PreparingClient extends pg.Client {
  /**
   * `flush` schedules the uncork of a tick's writes: the next tick by default; a client shared by concurrent
   * requests (PipelinedReader) waits for the end of the event loop's turn, so the reads of every request that
   * arrived in it leave together.
   */
  constructor(config?: string | pg.ClientConfig, flush: (uncork: () => void) => void = process.nextTick) {
    super(config);
    // A connection the server ends while the pool has lent the client out (a dropped database, an administrator's
    // pg_terminate_backend) emits 'error' with no pool listener attached: unhandled, that would crash the process.
    // Its query, if any, is rejected anyway, and the pool discards a client that is no longer queryable on release.
    this.on('error', () => undefined);
    const connection = (this as unknown as { connection: WireConnection }).connection;
    const send = connection._send.bind(connection);
    let corked = false;
    connection._send = (buffer) => {
      if (!corked) {
        corked = true;
        const stream = connection.stream;
        stream.cork();
        flush(() => {
          corked = false;
          stream.uncork();
        });
      }
      return send(buffer);
    };
  }

  override query(...args: never[]): never {
    const [config, values, callback] = args as unknown as QueryArgs;
    if (typeof config === 'string' && Array.isArray(values)) {
      const name = statementNames.get(config);
      if (name) {
        const named = { name, text: config, values };
        const send = super.query.bind(this) as unknown as (...a: unknown[]) => never;
        return typeof callback === 'function' ? send(named, callback) : send(named);
      }
    }
    return (super.query as unknown as (...a: unknown[]) => never).apply(this, args);
  }
}
