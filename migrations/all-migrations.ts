import { PlatformCore1732240000000 } from './1732240000000-platform-core.js';
import { Notifications1732240050000 } from './1732240050000-notifications.js';

/**
 * Every migration, in order. Listed explicitly (not globbed) so the same list works for the compiled
 * service, the migration CLI and the ESM test runner. A new migration is added at the end.
 */
export const ALL_MIGRATIONS = [PlatformCore1732240000000, Notifications1732240050000];
