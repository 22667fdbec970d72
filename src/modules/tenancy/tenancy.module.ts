import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProfileService } from '../identity/services/profile.service.js';
import { UserLifecycleService } from '../identity/services/user-lifecycle.service.js';
import { DataSourceReferencesController } from './controllers/data-source-references.controller.js';
import { InvitationTokensController } from './controllers/invitation-tokens.controller.js';
import { InvitationsController } from './controllers/invitations.controller.js';
import { JoinRequestsController } from './controllers/join-requests.controller.js';
import { OrganizationMembersController } from './controllers/organization-members.controller.js';
import { OrganizationsController } from './controllers/organizations.controller.js';
import { WorkspaceMembersController } from './controllers/workspace-members.controller.js';
import { WorkspacesController } from './controllers/workspaces.controller.js';
import { DataSourceReferenceEntity } from './entities/data-source-reference.entity.js';
import { JoinRequestEntity } from './entities/join-request.entity.js';
import { OrganizationInvitationEntity } from './entities/organization-invitation.entity.js';
import { OrganizationEntity } from './entities/organization.entity.js';
import { OrganizationMemberEntity } from './entities/organization-member.entity.js';
import { WorkspaceEntity } from './entities/workspace.entity.js';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity.js';
import { OrganizationRoleGuard } from './guards/organization-role.guard.js';
import { WorkspaceRoleGuard } from './guards/workspace-role.guard.js';
import { InvitationExpiryJob } from './jobs/invitation-expiry.job.js';
import { DataSourceReferencesService } from './services/data-source-references.service.js';
import { DocumentSourceService } from './services/document-source.service.js';
import { InvitationTokensService } from './services/invitation-tokens.service.js';
import { InvitationsService } from './services/invitations.service.js';
import { JoinRequestsService } from './services/join-requests.service.js';
import { OrganizationAccessService } from './services/organization-access.service.js';
import { OrganizationDirectoryService } from './services/organization-directory.service.js';
import { OrganizationMembersService } from './services/organization-members.service.js';
import { OrganizationProvisioningService } from './services/organization-provisioning.service.js';
import { UserOrganizationsController } from './controllers/user-organizations.controller.js';
import { UserOrganizationsService } from './services/user-organizations.service.js';
import { OrganizationStatisticsService } from './services/organization-statistics.service.js';
import { OrganizationsService } from './services/organizations.service.js';
import { UserDefaultsService } from './services/user-defaults.service.js';
import { WorkspaceAccessService } from './services/workspace-access.service.js';
import { WorkspaceMembersService } from './services/workspace-members.service.js';
import { WorkspacesService } from './services/workspaces.service.js';

/**
 * Organizations, members, invitations, join requests, workspaces and data-source references (spec 2.2–2.4,
 * 3, 4.2–4.3). Other modules use WorkspaceAccessService / OrganizationAccessService (or the
 * @RequireOrgRole / @RequireWorkspaceRole decorators, whose guards are exported), DocumentSourceService and
 * OrganizationDirectoryService (names and active managers of an organization, no caller membership needed).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      OrganizationEntity,
      OrganizationMemberEntity,
      WorkspaceEntity,
      WorkspaceMemberEntity,
      OrganizationInvitationEntity,
      JoinRequestEntity,
      DataSourceReferenceEntity,
    ]),
  ],
  controllers: [
    UserOrganizationsController,
    OrganizationsController,
    OrganizationMembersController,
    InvitationsController,
    InvitationTokensController,
    JoinRequestsController,
    WorkspacesController,
    WorkspaceMembersController,
    DataSourceReferencesController,
  ],
  providers: [
    UserOrganizationsService,
    OrganizationProvisioningService,
    WorkspaceAccessService,
    OrganizationAccessService,
    OrganizationDirectoryService,
    DocumentSourceService,
    OrganizationStatisticsService,
    UserDefaultsService,
    OrganizationsService,
    OrganizationMembersService,
    InvitationsService,
    InvitationTokensService,
    JoinRequestsService,
    WorkspacesService,
    WorkspaceMembersService,
    DataSourceReferencesService,
    InvitationExpiryJob,
    OrganizationRoleGuard,
    WorkspaceRoleGuard,
  ],
  exports: [
    WorkspaceAccessService,
    OrganizationAccessService,
    OrganizationDirectoryService,
    DocumentSourceService,
    OrganizationProvisioningService,
    OrganizationStatisticsService,
    OrganizationsService,
    OrganizationRoleGuard,
    WorkspaceRoleGuard,
  ],
})
export class TenancyModule implements OnModuleInit {
  constructor(
    private readonly lifecycle: UserLifecycleService,
    private readonly provisioning: OrganizationProvisioningService,
    private readonly profiles: ProfileService,
    private readonly defaults: UserDefaultsService,
  ) {}

  onModuleInit(): void {
    this.lifecycle.onUserRegistered((user) => this.provisioning.createPersonal(user));
    this.profiles.useDefaultsValidator((userId, organizationId, workspaceId) => this.defaults.validate(userId, organizationId, workspaceId));
  }
}
