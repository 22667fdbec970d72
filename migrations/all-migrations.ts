import { PlatformCore1732240000000 } from './1732240000000-platform-core.js';

/**
 * Every migration, in order. Listed explicitly (not globbed) so the same list works for the compiled
 * service, the migration CLI and the ESM test runner. A new migration is added at the end.
 */
export const ALL_MIGRATIONS = [PlatformCore1732240000000];
