import { PlatformCore1732240000000 } from './1732240000000-platform-core.js';
import { Notifications1732240050000 } from './1732240050000-notifications.js';
import { Identity1732240100000 } from './1732240100000-identity.js';
import { Tenancy1732240200000 } from './1732240200000-tenancy.js';
import { Documents1732240300000 } from './1732240300000-documents.js';

/**
 * Every migration, in order. Listed explicitly (not globbed) so the same list works for the compiled
 * service, the migration CLI and the ESM test runner. A new migration is added at the end.
 */
export const ALL_MIGRATIONS = [
  PlatformCore1732240000000,
  Notifications1732240050000,
  Identity1732240100000,
  Tenancy1732240200000,
  Documents1732240300000,
];
