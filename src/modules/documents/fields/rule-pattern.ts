import { RE2JS } from 're2js';

/**
 * The `pattern` validation rule's regular expressions. Patterns are written in JavaScript syntax (clients check
 * the same rule in the browser with `RegExp`) but the service evaluates them with RE2 (the `re2js` port), whose
 * matching time grows linearly with the text: Node's backtracking engine let one rule like `^(a+)+$` block the
 * event loop, and so every tenant, for seconds on a 30-character value. RE2 has no backreferences and no
 * lookaround, so a pattern using them is refused when the metadata is written (docs/values.md).
 *
 * Linear is O(program size × text length): a large program (`\p{L}{1,1000}` repeated) falling back from RE2's
 * DFA to its NFA costs up to ~80 ns per instruction and character. Both factors are bounded so that one check
 * stays well under a second whatever the input.
 */

export const MAX_PATTERN_LENGTH = 1000;
export const PATTERN_FLAGS = /^[imsu]*$/;
/** Compiled RE2 instructions a pattern may have; `[a-z]{1000}` is about 1000. */
export const MAX_PATTERN_PROGRAM = 2500;
/** Program size × text length one check may cost (~0.4 s at the measured worst case, usually far less). */
export const MAX_PATTERN_WORK = 5_000_000;

const CACHE_SIZE = 500;

export interface RulePattern {
  /** Longest text (UTF-16 code units) this pattern is evaluated on; longer text fails the rule. */
  readonly maxTextLength: number;
  /** Whether the pattern matches anywhere in `text` (like `RegExp.prototype.test`). */
  test(text: string): boolean;
}

export type PatternCompilation = { ok: true; pattern: RulePattern } | { ok: false; reason: string };

const cache = new Map<string, PatternCompilation>();

function re2Flags(flags: string): number {
  let bits = 0;
  if (flags.includes('i')) {
    bits |= RE2JS.CASE_INSENSITIVE;
  }
  if (flags.includes('m')) {
    bits |= RE2JS.MULTILINE;
  }
  if (flags.includes('s')) {
    bits |= RE2JS.DOTALL;
  }
  // `u` needs nothing: RE2 always matches by code point.
  return bits;
}

/**
 * Escapes that `RE2JS.translateRegExp` passes to RE2 with a meaning JavaScript (without `u`) does not give
 * them: there `\A`, `\z`, `\Q`, `\E`, `\a` are plain letters and `\p{L}` is the text "p{L}". Refused, so
 * that a pattern never means one thing in the client and another in the service. `\k<name>` (a named
 * backreference in JavaScript) would silently become the text "k<name>".
 */
const RE2_ONLY_ESCAPES = new Set(['A', 'z', 'Q', 'E', 'a']);
const LINEAR_TIME_REFUSAL =
  'pattern uses syntax the service cannot evaluate in linear time (RE2: no backreferences, lookahead or lookbehind)';

function escapeProblem(pattern: string, flags: string): string | null {
  for (let i = 0; i < pattern.length; i += 1) {
    if (pattern[i] !== '\\') {
      continue;
    }
    i += 1;
    const escaped = pattern[i] ?? '';
    if (escaped === 'k') {
      return `${LINEAR_TIME_REFUSAL}: named backreference \\k`;
    }
    if (RE2_ONLY_ESCAPES.has(escaped)) {
      return `pattern uses \\${escaped}, which JavaScript reads as the letter ${escaped}: write it without the backslash`;
    }
    if ((escaped === 'p' || escaped === 'P') && !flags.includes('u')) {
      return `pattern uses \\${escaped}{…}, which needs the u flag`;
    }
  }
  return null;
}

function hasNumInst(value: unknown): value is { numInst(): unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { numInst?: unknown }).numInst === 'function'
  );
}

/**
 * re2js types its compiled program as `any`; read the size defensively. An unknown shape (a future re2js)
 * counts as the largest allowed program, which keeps the work bound, and the unit test notices the change.
 */
export function programSize(compiled: RE2JS): number {
  const prog: unknown = compiled.re2().prog;
  if (hasNumInst(prog)) {
    const size = prog.numInst();
    if (typeof size === 'number' && Number.isFinite(size) && size > 0) {
      return size;
    }
  }
  return MAX_PATTERN_PROGRAM;
}

function compile(pattern: string, flags: string): PatternCompilation {
  if (pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH) {
    return {
      ok: false,
      reason: `pattern must be a non-empty string of at most ${MAX_PATTERN_LENGTH} characters`,
    };
  }
  if (!PATTERN_FLAGS.test(flags)) {
    return { ok: false, reason: 'flags may only contain i, m, s, u' };
  }
  try {
    // Only parsed, never run: parsing is linear, and it keeps the accepted syntax JavaScript's.
    new RegExp(pattern, flags);
  } catch {
    return { ok: false, reason: 'pattern is not a valid regular expression' };
  }
  const problem = escapeProblem(pattern, flags);
  if (problem !== null) {
    return { ok: false, reason: problem };
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern), re2Flags(flags));
  } catch (error) {
    const detail =
      error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error);
    return {
      ok: false,
      reason: `${LINEAR_TIME_REFUSAL}: ${detail}`,
    };
  }
  const size = programSize(compiled);
  if (size > MAX_PATTERN_PROGRAM) {
    return {
      ok: false,
      reason: `pattern is too complex: it compiles to ${size} instructions, at most ${MAX_PATTERN_PROGRAM} are allowed (lower its repetition counts)`,
    };
  }
  return {
    ok: true,
    pattern: { maxTextLength: Math.floor(MAX_PATTERN_WORK / size), test: (text) => compiled.test(text) },
  };
}

/** Compiles once per pattern and flags (failures included); the oldest entry leaves a full cache. */
export function compileRulePattern(pattern: string, flags = ''): PatternCompilation {
  const key = `${flags}/${pattern}`;
  const cached = cache.get(key);
  if (cached) {
    return cached;
  }
  const compilation = compile(pattern, flags);
  if (cache.size >= CACHE_SIZE) {
    const oldest = cache.keys().next();
    if (!oldest.done) {
      cache.delete(oldest.value);
    }
  }
  cache.set(key, compilation);
  return compilation;
}
