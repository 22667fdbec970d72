/** Metadata keys of the tenancy role decorators, read by their guards. */
export const ORG_ROLE_KEY = 'quire:tenancy:org-role';
export const WORKSPACE_NEED_KEY = 'quire:tenancy:workspace-need';
