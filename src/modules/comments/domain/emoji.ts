/**
 * A short name: 1–40 of lower-case letters, digits, `_`, `+`, `-` with at least one letter (or `+1` / `-1`), with
 * or without surrounding colons.
 */
const SHORT_NAME = /^(?::([a-z0-9_+-]{1,40}):|([a-z0-9_+-]{1,40}))$/;
const NAME_OK = /[a-z]|^[+-]1$/;
const PICTOGRAPHIC = /\p{Extended_Pictographic}|\p{Emoji_Presentation}|\p{Regional_Indicator}|\u20E3/u;
/** The longest short name with its colons (40 + 2, docs/comments.md); it was 32, refusing documented names of 33–40 and
 * the stored `:name:` form of 31–32-character names. Emoji graphemes (ZWJ sequences, tag flags) stay far below. */
const MAX_EMOJI_LENGTH = 42;

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * The canonical form of a reaction emoji, or null when the input is not one (pure logic, unit-tested):
 * - one grapheme of emoji (a pictographic character, a ZWJ sequence, a flag or a keycap) — kept as given;
 * - a short name such as `:thumbsup:` or `thumbsup` — stored as `:thumbsup:` so both spellings are one reaction.
 * Free text, several emoji, or a short name with other characters is refused.
 */
export function canonicalEmoji(input: unknown): string | null {
  if (typeof input !== 'string') {
    return null;
  }
  const value = input.trim();
  if (value === '' || value.length > MAX_EMOJI_LENGTH) {
    return null;
  }
  const short = SHORT_NAME.exec(value);
  if (short && NAME_OK.test(short[1] ?? short[2] ?? '')) {
    return `:${short[1] ?? short[2]}:`;
  }
  const graphemes = [...segmenter.segment(value)];
  if (graphemes.length !== 1 || !PICTOGRAPHIC.test(value)) {
    return null;
  }
  return value;
}
