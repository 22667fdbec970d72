import { PlatformCore1732240000000 } from './1732240000000-platform-core.js';
import { Notifications1732240050000 } from './1732240050000-notifications.js';
import { Identity1732240100000 } from './1732240100000-identity.js';
import { Tenancy1732240200000 } from './1732240200000-tenancy.js';
import { Documents1732240300000 } from './1732240300000-documents.js';
import { TenantDocumentIdentity1732240400000 } from './1732240400000-tenant-document-identity.js';
import { AccessChangeNotify1732240450000 } from './1732240450000-access-change-notify.js';
import { NotificationDelivery1732240460000 } from './1732240460000-notification-delivery.js';
import { WritePathIndexes1732240470000 } from './1732240470000-write-path-indexes.js';
import { Views1732240500000 } from './1732240500000-views.js';
import { Comments1732240510000 } from './1732240510000-comments.js';
import { Relations1732240520000 } from './1732240520000-relations.js';
import { Webhooks1732240600000 } from './1732240600000-webhooks.js';
import { Realtime1732240700000 } from './1732240700000-realtime.js';
import { HistoryApprovals1732240800000 } from './1732240800000-history-approvals.js';
import { ComputedFields1732240900000 } from './1732240900000-computed-fields.js';
import { SupplyChain1732240910000 } from './1732240910000-supply-chain.js';
import { SupplyChainSync1732240920000 } from './1732240920000-supply-chain-sync.js';
import { RevisionHead1732241000000 } from './1732241000000-revision-head.js';
import { SyncRequestIds1732241100000 } from './1732241100000-sync-request-ids.js';
import { InlineRequestChanges1732241200000 } from './1732241200000-inline-request-changes.js';
import { RequestDocumentReference1732241300000 } from './1732241300000-request-document-reference.js';
import { InvitationDeclinedRevoked1732241400000 } from './1732241400000-invitation-declined-revoked.js';
import { WebhookAllOrganizations1732241500000 } from './1732241500000-webhook-all-organizations.js';
import { SyncRequestReviewNote1732241600000 } from './1732241600000-sync-request-review-note.js';
import { WebhookCredentialScopes1732241700000 } from './1732241700000-webhook-credential-scopes.js';
import { PropagationReconcileJobs1732241820000 } from './1732241820000-propagation-reconcile-jobs.js';
import { ConnectionRefusals1732241840000 } from './1732241840000-connection-refusals.js';
import { AuthorizePageLoginStates1732241900000 } from './1732241900000-authorize-page-login-states.js';
import { OutboxCommitOrder1732242030000 } from './1732242030000-outbox-commit-order.js';
import { LoginAttemptsPending1732242110000 } from './1732242110000-login-attempts-pending.js';

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
  TenantDocumentIdentity1732240400000,
  AccessChangeNotify1732240450000,
  NotificationDelivery1732240460000,
  WritePathIndexes1732240470000,
  Views1732240500000,
  Comments1732240510000,
  Relations1732240520000,
  Webhooks1732240600000,
  Realtime1732240700000,
  HistoryApprovals1732240800000,
  ComputedFields1732240900000,
  SupplyChain1732240910000,
  SupplyChainSync1732240920000,
  RevisionHead1732241000000,
  SyncRequestIds1732241100000,
  InlineRequestChanges1732241200000,
  RequestDocumentReference1732241300000,
  InvitationDeclinedRevoked1732241400000,
  WebhookAllOrganizations1732241500000,
  SyncRequestReviewNote1732241600000,
  WebhookCredentialScopes1732241700000,
  PropagationReconcileJobs1732241820000,
  ConnectionRefusals1732241840000,
  AuthorizePageLoginStates1732241900000,
  OutboxCommitOrder1732242030000,
  LoginAttemptsPending1732242110000,
];
