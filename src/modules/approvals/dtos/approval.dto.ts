import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import type { ErrorDetail } from '../../../common/errors/app.exception.js';
import { DocumentScopeQueryDto } from '../../documents/dtos/document-query.dto.js';
import { APPROVAL_DECISIONS, APPROVAL_STATUSES, APPROVAL_STRATEGIES, NODE_STATUSES } from '../domain/approval.records.js';

/** At most this many approvers per instance. */
export const MAX_APPROVERS = 20;

export class SubmitApprovalDto {
  @ApiProperty({ type: [String], format: 'uuid', description: 'User ids who can read the document, in order (sequential)', minItems: 1, maxItems: MAX_APPROVERS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_APPROVERS)
  @ArrayUnique()
  @IsUUID('all', { each: true })
  approvers: string[];

  @ApiPropertyOptional({ enum: APPROVAL_STRATEGIES, default: 'sequential' })
  @IsOptional()
  @IsIn(APPROVAL_STRATEGIES)
  strategy?: (typeof APPROVAL_STRATEGIES)[number];
}

export class StartApprovalDto {
  /** Not checked for its form here: an id that names no request of the document is NOT_FOUND, malformed or not (like GET /requests/{reqId}). */
  @ApiProperty({ maxLength: 128 }) @IsString() @MaxLength(128) requestId: string;
  @ApiProperty({ description: 'A flow id of GET /approval', maxLength: 64 }) @IsString() @MaxLength(64) flowId: string;
}

export class DecisionQueryDto extends DocumentScopeQueryDto {
  @ApiProperty({ enum: ['approved', 'rejected'] }) @IsIn(['approved', 'rejected']) result: 'approved' | 'rejected';
}

export class DecisionBodyDto {
  @ApiPropertyOptional({ maxLength: 4000 }) @IsOptional() @IsString() @MaxLength(4000) comment?: string;
  @ApiPropertyOptional({ description: 'Free-form signature stored with the decision (a name, a reference)', maxLength: 4000 })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  signature?: string;
}

export class ApproveBodyDto {
  @ApiProperty({ enum: APPROVAL_DECISIONS }) @IsIn(APPROVAL_DECISIONS) decision: (typeof APPROVAL_DECISIONS)[number];
  @ApiPropertyOptional({ maxLength: 4000 }) @IsOptional() @IsString() @MaxLength(4000) comment?: string;
}

export class ApprovalNodeDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: 'integer' }) ordinal: number;
  @ApiProperty() approver: string;
  @ApiProperty({ enum: NODE_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String }) decidedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) comment: string | null;
  @ApiProperty({ nullable: true, type: String }) signature: string | null;
}

export class ApprovalInstanceDto {
  @ApiProperty() id: string;
  @ApiProperty() requestId: string;
  @ApiProperty() docType: string;
  @ApiProperty() docId: string;
  @ApiProperty() flowId: string;
  @ApiProperty({ enum: APPROVAL_STRATEGIES }) strategy: string;
  @ApiProperty({ enum: APPROVAL_STATUSES }) status: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Ordinal of the node whose turn it is (null once decided)' }) currentNode: number | null;
  @ApiProperty({ type: [ApprovalNodeDto] }) nodes: ApprovalNodeDto[];
  @ApiProperty() createdBy: string;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
  @ApiProperty({ nullable: true, type: String }) completedAt: string | null;
  @ApiProperty({ type: 'integer', description: 'How often new changes withdrew the approvals given' }) resetCount: number;
}

export class ApprovalFlowDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: APPROVAL_STRATEGIES }) strategy: string;
  @ApiProperty({ type: [String] }) approvers: string[];
}

export class ApprovalConfigDto {
  @ApiProperty() requiresApproval: boolean;
  @ApiProperty() autoMerge: boolean;
  @ApiProperty({ type: [ApprovalFlowDto] }) flows: ApprovalFlowDto[];
}

export class AutoMergeErrorDto {
  @ApiProperty({ description: 'The error code the merge was refused with (CONFLICT, INVALID_STATE, APPROVAL_REQUIRED, …)' }) code: string;
  @ApiProperty({ type: [Object], description: 'Its details, as in an error envelope' }) details: ErrorDetail[];
}

export class AutoMergeResultDto {
  @ApiProperty() merged: boolean;
  @ApiProperty({ nullable: true, type: String }) revisionId: string | null;
  @ApiProperty({ type: [Object], description: 'The conflicts when the merge was refused with CONFLICT (the request stays open)' }) conflicts: unknown[];
  @ApiProperty({ type: AutoMergeErrorDto, nullable: true, description: 'Why the merge was refused (the decision stays recorded); null once merged' })
  error: AutoMergeErrorDto | null;
}

export class DecisionResponseDto extends ApprovalInstanceDto {
  @ApiProperty({ type: AutoMergeResultDto, nullable: true, description: 'With workflow.autoMerge, the merge the completing approval ran' })
  merge: AutoMergeResultDto | null;
}
