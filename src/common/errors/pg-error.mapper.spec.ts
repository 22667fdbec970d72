import { mapPgError } from './pg-error.mapper.js';

describe('mapPgError', () => {
  it.each(['22P05', '22021'])('maps %s (U+0000 in jsonb or text) to VALIDATION_ERROR', (code) => {
    const mapped = mapPgError({ driverError: { code } });
    expect(mapped?.code).toBe('VALIDATION_ERROR');
    expect(mapped?.options.details?.[0]?.reason).toContain('NUL character');
  });

  it('leaves errors a client cannot cause unmapped', () => {
    expect(mapPgError({ code: '42P18' })).toBeUndefined();
    expect(mapPgError(new Error('boom'))).toBeUndefined();
  });
});
