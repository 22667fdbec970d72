import { AppException } from '../errors/app.exception.js';
import { ErrorCode } from '../errors/error-code.js';
import { decodeCursor, encodeCursor, offsetOf, pageOf } from './pagination.js';

function codeOf(work: () => unknown): ErrorCode | undefined {
  try {
    work();
  } catch (error) {
    return error instanceof AppException ? error.code : undefined;
  }
  return undefined;
}

describe('cursor encoding', () => {
  it('round-trips a position of mixed values', () => {
    const position = ['2024-12-01T10:00:00.000Z', 42, 'a"b/c', null];
    const cursor = encodeCursor('rows', position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor('rows', cursor)).toEqual(position);
  });

  it('refuses a cursor of another list', () => {
    expect(codeOf(() => decodeCursor('members', encodeCursor('rows', [1])))).toBe(ErrorCode.VALIDATION_ERROR);
  });

  it.each([
    '',
    'not-base64-json',
    Buffer.from('{"k":"rows"}').toString('base64url'),
    Buffer.from('[1,2]').toString('base64url'),
  ])('refuses the malformed cursor %j with VALIDATION_ERROR on the cursor field', (cursor) => {
    try {
      decodeCursor('rows', cursor);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(AppException);
      expect((error as AppException).code).toBe(ErrorCode.VALIDATION_ERROR);
      expect((error as AppException).options.details).toEqual([
        { field: 'cursor', reason: 'invalid cursor' },
      ]);
    }
  });
});

describe('page helpers', () => {
  it('computes offsets and page counts', () => {
    expect(offsetOf({ page: 1, pageSize: 20 })).toBe(0);
    expect(offsetOf({ page: 3, pageSize: 20 })).toBe(40);
    expect(pageOf([], 0, { page: 1, pageSize: 20 })).toEqual({
      items: [],
      page: 1,
      pageSize: 20,
      total: 0,
      totalPages: 0,
    });
    expect(pageOf(['x'], 41, { page: 3, pageSize: 20 })).toEqual({
      items: ['x'],
      page: 3,
      pageSize: 20,
      total: 41,
      totalPages: 3,
    });
  });
});
