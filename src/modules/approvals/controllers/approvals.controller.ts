import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiConflictResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { RequireScopes } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { CurrentDocument, DocumentAccess } from '../../documents/controllers/document-access.guard.js';
import { DocumentScopeQueryDto } from '../../documents/dtos/document-query.dto.js';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import {
  ApprovalConfigDto,
  ApprovalInstanceDto,
  ApproveBodyDto,
  DecisionBodyDto,
  DecisionQueryDto,
  DecisionResponseDto,
  StartApprovalDto,
  SubmitApprovalDto,
} from '../dtos/approval.dto.js';
import { ApprovalsService } from '../services/approvals.service.js';

/**
 * Approvals of a document's change requests (spec 2.10, 4.4; docs/approvals.md). Reads need doc:read and read
 * rights; starting needs approvals:manage and write rights; deciding approvals:manage and read rights (approvers
 * may be viewers) — and being the approver whose turn it is, in a document that is neither archived nor served
 * read-only (the service refuses those, as every write).
 */
@ApiTags('approvals')
@Controller('doc/:docType/:docId')
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  @Post('requests/:reqId/submit-approval')
  @RequireScopes('approvals:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Submit an open request for approval by the given approvers (sequential or parallel)' })
  @ApiEnvelope(ApprovalInstanceDto, { status: 201 })
  @ApiConflictResponse({
    description: 'INVALID_STATE: the request is not open (payload requestId, status) or already has a live approval (payload requestId, instanceId, status)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  submit(
    @CurrentDocument() doc: DocumentContext,
    @Param('reqId') reqId: string,
    @Query() _query: DocumentScopeQueryDto,
    @Body() body: SubmitApprovalDto,
  ): Promise<ApprovalInstanceDto> {
    return this.approvals.submit(doc, reqId, body);
  }

  @Get('approval')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: "The document's approval configuration and the flows a request can be started with" })
  @ApiEnvelope(ApprovalConfigDto)
  config(@CurrentDocument() doc: DocumentContext, @Query() _query: DocumentScopeQueryDto): ApprovalConfigDto {
    return this.approvals.config(doc);
  }

  @Post('approval/start')
  @RequireScopes('approvals:manage')
  @DocumentAccess('write')
  @ApiOperation({ summary: 'Start an approval of a request with a flow of GET /approval' })
  @ApiEnvelope(ApprovalInstanceDto, { status: 201 })
  @ApiConflictResponse({
    description: 'INVALID_STATE: the request is not open (payload requestId, status) or already has a live approval (payload requestId, instanceId, status)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  start(@CurrentDocument() doc: DocumentContext, @Query() _query: DocumentScopeQueryDto, @Body() body: StartApprovalDto): Promise<ApprovalInstanceDto> {
    return this.approvals.start(doc, body);
  }

  @Get('approval/:instanceId')
  @RequireScopes('doc:read')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'One approval instance with its nodes' })
  @ApiEnvelope(ApprovalInstanceDto)
  get(@CurrentDocument() doc: DocumentContext, @Param('instanceId') instanceId: string, @Query() _query: DocumentScopeQueryDto): Promise<ApprovalInstanceDto> {
    return this.approvals.get(doc, instanceId);
  }

  @Post('approval/:instanceId/decision')
  @HttpCode(200)
  @RequireScopes('approvals:manage')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Decide (result=approved|rejected) as the approver whose turn it is' })
  @ApiEnvelope(DecisionResponseDto)
  @ApiBody({ type: DecisionBodyDto, required: false, description: 'Optional: comment and signature' })
  @ApiConflictResponse({
    description: 'INVALID_STATE: the approval is no longer pending (payload instanceId, status) or its request is not open (payload requestId, status)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  decision(
    @CurrentDocument() doc: DocumentContext,
    @Param('instanceId') instanceId: string,
    @Query() query: DecisionQueryDto,
    @Body() body: DecisionBodyDto,
  ): Promise<DecisionResponseDto> {
    return this.approvals.decide(doc, instanceId, query.result, body.comment ?? null, body.signature ?? null);
  }

  @Post('approvals/:approvalId/approve')
  @HttpCode(200)
  @RequireScopes('approvals:manage')
  @DocumentAccess('read')
  @ApiOperation({ summary: 'Decide (decision=approved|rejected|request_changes): the alternate form' })
  @ApiEnvelope(DecisionResponseDto)
  @ApiConflictResponse({
    description: 'INVALID_STATE: the approval is no longer pending (payload instanceId, status) or its request is not open (payload requestId, status)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  approve(
    @CurrentDocument() doc: DocumentContext,
    @Param('approvalId') approvalId: string,
    @Query() _query: DocumentScopeQueryDto,
    @Body() body: ApproveBodyDto,
  ): Promise<DecisionResponseDto> {
    return this.approvals.decide(doc, approvalId, body.decision, body.comment ?? null, null);
  }
}
