import { RE2JS } from 're2js';
import {
  compileRulePattern,
  MAX_PATTERN_PROGRAM,
  MAX_PATTERN_WORK,
  programSize,
  type RulePattern,
} from './rule-pattern.js';

function compiled(pattern: string, flags = ''): RulePattern {
  const result = compileRulePattern(pattern, flags);
  if (!result.ok) {
    throw new Error(`expected ${pattern} to compile: ${result.reason}`);
  }
  return result.pattern;
}

function refusal(pattern: string, flags = ''): string {
  const result = compileRulePattern(pattern, flags);
  if (result.ok) {
    throw new Error(`expected ${pattern} to be refused`);
  }
  return result.reason;
}

describe('rule patterns (RE2)', () => {
  it('matches a nested quantifier in linear time', () => {
    const nested = compiled('^(a+)+$');
    const started = performance.now();
    expect(nested.test(`${'a'.repeat(5000)}!`)).toBe(false);
    expect(nested.test(`${'a'.repeat(100_000)}!`)).toBe(false);
    expect(nested.test('a'.repeat(5000))).toBe(true);
    // Node's own engine needs seconds for 28 characters; RE2 needs milliseconds for 100,000.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('keeps JavaScript syntax and flags', () => {
    expect(compiled('^[A-Z]{3}-\\d+$').test('ABC-12')).toBe(true);
    expect(compiled('^[A-Z]{3}-\\d+$').test('ABC-')).toBe(false);
    expect(compiled('(?<year>\\d{4})-(?<month>\\d{2})').test('on 2024-05')).toBe(true);
    expect(compiled('^\\u00e9\\x41$').test('éA')).toBe(true);
    expect(compiled('^\\p{Lu}', 'u').test('Élan')).toBe(true);
    expect(compiled('a/b').test('a/b')).toBe(true);
    expect(compiled('^abc$', 'i').test('ABC')).toBe(true);
    expect(compiled('^b$').test('a\nb')).toBe(false);
    expect(compiled('^b$', 'm').test('a\nb')).toBe(true);
    expect(compiled('a.b').test('a\nb')).toBe(false);
    expect(compiled('a.b', 's').test('a\nb')).toBe(true);
    // Code points, as with the u flag, whether or not it is given.
    expect(compiled('^.$').test('😀')).toBe(true);
  });

  it('refuses backreferences and lookaround, naming RE2', () => {
    for (const pattern of ['(a)\\1', '(?<x>a)\\k<x>', 'a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b']) {
      expect(refusal(pattern)).toMatch(
        /^pattern uses syntax the service cannot evaluate in linear time \(RE2/,
      );
    }
  });

  it('refuses escapes that RE2 would read differently from JavaScript', () => {
    expect(refusal('\\Aabc')).toBe(
      'pattern uses \\A, which JavaScript reads as the letter A: write it without the backslash',
    );
    expect(refusal('abc\\z')).toMatch(/^pattern uses \\z/);
    expect(refusal('^\\p{L}+$')).toBe('pattern uses \\p{…}, which needs the u flag');
    expect(compiled('^\\p{L}+$', 'u').test('héllo')).toBe(true);
    expect(compiled('^a\\-b\\.c\\\\$').test('a-b.c\\')).toBe(true);
  });

  it('refuses what JavaScript refuses, even when RE2 would take it', () => {
    expect(refusal('(')).toBe('pattern is not a valid regular expression');
    expect(refusal('(?i)abc')).toBe('pattern is not a valid regular expression');
    expect(refusal('a', 'g')).toBe('flags may only contain i, m, s, u');
    expect(refusal('')).toMatch(/non-empty/);
  });

  it('bounds the program size and the text length checked', () => {
    expect(refusal('^[a-z]{1,1000}[0-9]{1,1000}$')).toMatch(
      /^pattern is too complex: it compiles to \d+ instructions/,
    );
    const small = compiled('^[a-z]+$');
    expect(small.maxTextLength).toBeGreaterThanOrEqual(500_000);
    const large = compiled('^[a-z]{1000}$');
    expect(large.maxTextLength).toBeLessThan(small.maxTextLength);
    expect(large.maxTextLength).toBeGreaterThanOrEqual(MAX_PATTERN_WORK / MAX_PATTERN_PROGRAM);
  });

  it('reads the program size of the pinned re2js', () => {
    // Falls back to the maximum when re2js changes its internals: this test is what notices.
    const size = programSize(RE2JS.compile('^[a-z]{100}$'));
    expect(size).toBeGreaterThan(100);
    expect(size).toBeLessThan(MAX_PATTERN_PROGRAM);
  });

  it('compiles each pattern and flags once', () => {
    expect(compileRulePattern('^cached$', 'i')).toBe(compileRulePattern('^cached$', 'i'));
    expect(compileRulePattern('^cached$', 'i')).not.toBe(compileRulePattern('^cached$', ''));
    expect(compileRulePattern('(a)\\1')).toBe(compileRulePattern('(a)\\1'));
  });
});
