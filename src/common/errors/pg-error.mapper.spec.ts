import { mapPgError } from './pg-error.mapper.js';

describe('mapPgError', () => {
  it.each(['22P05', '22021'])('maps %s (U+0000 in jsonb or text) to VALIDATION_ERROR', (code) => {
    const mapped = mapPgError({ driverError: { code } });
    expect(mapped?.code).toBe('VALIDATION_ERROR');
    expect(mapped?.options.details?.[0]?.reason).toContain('NUL character');
  });

  it('names the key column of a unique or foreign-key violation, never the constraint', () => {
    const unique = mapPgError({
      driverError: { code: '23505', constraint: 'organization_members_uq', detail: 'Key (organization_id, user_id)=(a, b) already exists.' },
    });
    expect(unique?.code).toBe('ALREADY_EXISTS');
    expect(unique?.options.details).toEqual([{ field: 'userId', reason: 'already exists' }]);
    const expression = mapPgError({ driverError: { code: '23505', constraint: 'users_email_uq', detail: 'Key (lower(email))=(x@y.z) already exists.' } });
    expect(expression?.options.details).toEqual([{ field: 'email', reason: 'already exists' }]);
    const foreign = mapPgError({ driverError: { code: '23503', constraint: 'x_fkey', detail: 'Key (parent_id)=(p) is not present in table "comments".' } });
    expect(foreign?.options.details).toEqual([{ field: 'parentId', reason: 'refers to something that does not exist' }]);
    const unknown = mapPgError({ driverError: { code: '23505', constraint: 'approval_nodes_instance_id_approver_key' } });
    expect(unknown?.options.details).toEqual([{ field: undefined, reason: 'already exists' }]);
  });

  it('answers an unreachable database with 503 SERVICE_UNAVAILABLE, not a 500', () => {
    const unreachable = [
      { driverError: { code: '08006' } },
      { code: '57P01' },
      { code: '53300' },
      { driverError: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) },
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ];
    for (const error of unreachable) {
      expect(mapPgError(error)?.code).toBe('SERVICE_UNAVAILABLE');
    }
    // The same socket codes from something else of the request (a DNS lookup, an outgoing call) are not the database.
    expect(mapPgError(Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' }))).toBeUndefined();
    expect(mapPgError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }))).toBeUndefined();
  });

  it('leaves errors a client cannot cause unmapped', () => {
    expect(mapPgError({ code: '42P18' })).toBeUndefined();
    expect(mapPgError(new Error('boom'))).toBeUndefined();
  });
});
