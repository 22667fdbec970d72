import { readFileSync, writeFileSync } from 'node:fs';
import { ErrorCode } from '../../../src/common/errors/error-code.js';
import { ERROR_HTTP_STATUS } from '../../../src/common/errors/error-status.js';
import { ERROR_MESSAGES } from '../../../src/common/i18n/error-messages.js';
import { LANGUAGES } from '../../../src/common/i18n/languages.js';

const DOC = 'docs/errors.md';
const START =
  '<!-- error-table:start (generated from src/common/errors; UPDATE_ERRORS_DOC=1 npx jest test/e2e/platform/errors-doc) -->';
const END = '<!-- error-table:end -->';

/** The codes section 7 of the specification names; every other code is Quire's addition. */
const SPEC_CODES = new Set<string>([
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'DOC_NOT_FOUND',
  'VALIDATION_ERROR',
  'CONFLICT',
  'VERSION_CONFLICT',
  'RATE_LIMIT_EXCEEDED',
  'INVALID_CLIENT',
  'INVALID_TOKEN',
  'INVALID_SCOPE',
  'BAD_USER_NAME',
]);

function table(): string {
  const rows = Object.values(ErrorCode).map(
    (code) =>
      `| \`${code}\` | ${ERROR_HTTP_STATUS[code]} | ${ERROR_MESSAGES[code].en.replace(/\|/g, '\\|')} | ${SPEC_CODES.has(code) ? 'spec' : 'Quire'} |`,
  );
  return [
    START,
    '| Code | HTTP status | Meaning (the `en` message) | Defined by |',
    '|---|---|---|---|',
    ...rows,
    END,
  ].join('\n');
}

describe('docs/errors.md', () => {
  it('lists every error code with its HTTP status and English meaning', () => {
    const doc = readFileSync(DOC, 'utf8');
    const start = doc.indexOf(START);
    const end = doc.indexOf(END);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    const current = doc.slice(start, end + END.length);
    const expected = table();
    if (current !== expected && process.env.UPDATE_ERRORS_DOC === '1') {
      writeFileSync(DOC, doc.slice(0, start) + expected + doc.slice(end + END.length));
      return;
    }
    expect(current).toBe(expected);
  });

  it('every code has a message in every shipped language', () => {
    for (const code of Object.values(ErrorCode)) {
      for (const language of LANGUAGES) {
        expect(`${code}.${language}: ${ERROR_MESSAGES[code][language]?.trim() ? 'ok' : 'missing'}`).toBe(
          `${code}.${language}: ok`,
        );
      }
    }
  });

  it('spec codes keep the statuses the specification fixes', () => {
    expect(ERROR_HTTP_STATUS[ErrorCode.VERSION_CONFLICT]).toBe(409);
    expect(ERROR_HTTP_STATUS[ErrorCode.FORBIDDEN]).toBe(403);
    expect(ERROR_HTTP_STATUS[ErrorCode.UNAUTHORIZED]).toBe(401);
    expect(ERROR_HTTP_STATUS[ErrorCode.RATE_LIMIT_EXCEEDED]).toBe(429);
  });
});
