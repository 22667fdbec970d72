/** Languages every message ships in (ISO 639-1). A response's `message` carries all of them. */
export const LANGUAGES = ['en', 'zh', 'ja', 'ko', 'es', 'fr', 'de', 'pt', 'ru', 'ar'] as const;
export type Language = (typeof LANGUAGES)[number];
export type LocalizedText = Record<Language, string>;
