import { ApiProperty } from '@nestjs/swagger';

export class UserOrganizationDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ nullable: true, type: String }) displayName: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: ['personal', 'team', 'enterprise'] }) type: string;
  @ApiProperty({ nullable: true, type: String }) logoUrl: string | null;
  @ApiProperty({ enum: ['owner', 'admin', 'member', 'guest'], description: "The caller's organization role" })
  role: string;
  @ApiProperty({ description: 'When the caller joined' }) joinedAt: string;
  @ApiProperty({ description: "True for the caller's default organization" }) isDefault: boolean;
}
