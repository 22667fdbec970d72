/**
 * The SQL twin of `permissionListAdmits` (domain/document-settings.ts) for a caller who is not a manager: true when
 * the jsonb `list` does not narrow (absent, not an array) or holds one of the caller's subjects — a role subject their
 * rights reach (`roles`, a text[] placeholder) or their id as `<uuid>` or `user:<uuid>` in any letter case (`userId`,
 * a lower-case text placeholder). Lists of documents filter with it before paging, so `total` and the pages count
 * only what the caller may see. Keep the two in step.
 */
export function permissionListAdmitsSql(list: string, roles: string, userId: string): string {
  // jsonb_array_elements refuses a non-array; OR does not promise to skip it, so a non-array is read as [].
  return `(jsonb_typeof(${list}) IS DISTINCT FROM 'array' OR EXISTS (
    SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${list}) = 'array' THEN ${list} ELSE '[]'::jsonb END) AS subject (value)
     WHERE jsonb_typeof(subject.value) = 'string'
       AND ((subject.value #>> '{}') = ANY (${roles}::text[])
         OR lower(CASE WHEN starts_with(subject.value #>> '{}', 'user:') THEN substr(subject.value #>> '{}', 6)
                       ELSE subject.value #>> '{}' END) = ${userId})))`;
}
