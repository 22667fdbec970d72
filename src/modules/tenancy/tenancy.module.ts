import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UserLifecycleService } from '../identity/services/user-lifecycle.service.js';
import { OrganizationEntity } from './entities/organization.entity.js';
import { OrganizationMemberEntity } from './entities/organization-member.entity.js';
import { WorkspaceEntity } from './entities/workspace.entity.js';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity.js';
import { DocumentSourceService } from './services/document-source.service.js';
import { OrganizationProvisioningService } from './services/organization-provisioning.service.js';
import { WorkspaceAccessService } from './services/workspace-access.service.js';

@Module({
  imports: [TypeOrmModule.forFeature([OrganizationEntity, OrganizationMemberEntity, WorkspaceEntity, WorkspaceMemberEntity])],
  providers: [OrganizationProvisioningService, WorkspaceAccessService, DocumentSourceService],
  exports: [WorkspaceAccessService, DocumentSourceService, OrganizationProvisioningService],
})
export class TenancyModule implements OnModuleInit {
  constructor(
    private readonly lifecycle: UserLifecycleService,
    private readonly provisioning: OrganizationProvisioningService,
  ) {}

  onModuleInit(): void {
    this.lifecycle.onUserRegistered((user) => this.provisioning.createPersonal(user));
  }
}
