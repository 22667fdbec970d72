import pg from 'pg';
import { installTimestampParser } from './timestamp-parser.js';

describe('installTimestampParser', () => {
  const parse = (text: string): unknown => (pg.types.getTypeParser(1184, 'text') as (text: string) => unknown)(text);

  it('parses as pg does, and gives each column a Date of its own even for the same text', () => {
    const original = pg.types.getTypeParser(1184, 'text') as (text: string) => unknown;
    installTimestampParser();
    installTimestampParser();
    const text = '2026-11-27 01:23:45.123456+00';
    const first = parse(text) as Date;
    const second = parse(text) as Date;
    expect(first).toBeInstanceOf(Date);
    expect(first).not.toBe(second);
    expect(first.getTime()).toBe(second.getTime());
    expect(first.toISOString()).toBe('2026-11-27T01:23:45.123Z');
    // A caller changing its Date does not change the next one parsed from the same text.
    first.setTime(0);
    expect((parse(text) as Date).toISOString()).toBe('2026-11-27T01:23:45.123Z');
    // Two texts in turn (a row's created_at and updated_at) are both remembered, and still parsed right.
    const created = '2026-11-26 09:00:00+00';
    for (let i = 0; i < 3; i += 1) {
      expect((parse(created) as Date).toISOString()).toBe('2026-11-26T09:00:00.000Z');
      expect((parse(text) as Date).toISOString()).toBe('2026-11-27T01:23:45.123Z');
    }
    for (const other of ['0099-06-01 10:00:00.5+00', '2026-01-01 15:30:00.123456+05:30', 'infinity', '-infinity']) {
      expect(parse(other)).toEqual(original(other));
    }
  });
});
