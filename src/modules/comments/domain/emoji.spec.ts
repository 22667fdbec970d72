import { canonicalEmoji } from './emoji.js';

describe('canonicalEmoji', () => {
  it('accepts one emoji grapheme as given', () => {
    for (const emoji of ['👍', '🎉', '❤️', '👩‍💻', '🇩🇪', '1️⃣', '👍🏽']) {
      expect(canonicalEmoji(emoji)).toBe(emoji);
    }
  });

  it('accepts short names with or without colons, in one canonical form', () => {
    expect(canonicalEmoji(':thumbsup:')).toBe(':thumbsup:');
    expect(canonicalEmoji('thumbsup')).toBe(':thumbsup:');
    expect(canonicalEmoji('+1')).toBe(':+1:');
    expect(canonicalEmoji('heavy_check_mark')).toBe(':heavy_check_mark:');
  });

  it('refuses text, several emoji, mixed input and malformed short names', () => {
    for (const input of ['', 'hello world', 'A', '1', '👍👍', '👍a', ':thumbsup', 'thumbs up', ':Thumbsup:', '<script>', 'x'.repeat(41), 42, null]) {
      expect(canonicalEmoji(input)).toBeNull();
    }
  });
});
