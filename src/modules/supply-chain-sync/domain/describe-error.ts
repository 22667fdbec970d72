interface DetailLike {
  fieldId?: string;
  field?: string;
  reason?: string;
}

/** A readable one-line reason for a sync log: validation details when the error carries them, else its message. */
export function describeError(error: unknown): string {
  const options =
    error && typeof error === 'object' && 'options' in error
      ? (error as { options?: { details?: DetailLike[] } }).options
      : undefined;
  const details =
    options?.details ??
    (error && typeof error === 'object' && 'details' in error
      ? (error as { details?: DetailLike[] }).details
      : undefined);
  if (Array.isArray(details) && details.length > 0) {
    return details
      .map((detail) => [detail.fieldId ?? detail.field, detail.reason].filter(Boolean).join(': '))
      .join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}
