import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { SkipRateLimit } from '../../common/rate-limit/rate-limit.guard.js';
import { Public } from '../../common/auth/auth.decorators.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../common/http/api-envelope.decorator.js';

/** Liveness and readiness probes, mounted at the host root. Never rate limited. */
@ApiTags('health')
@SkipRateLimit()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Liveness: the process is up' })
  @ApiEnvelope(null)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @Public()
  // Terminus's own Swagger declarations describe its bare result; the answer is the envelope around it (the 503 is
  // SERVICE_UNAVAILABLE, docs/errors.md), so they are left out and the envelope is declared instead.
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: the database answers' })
  @ApiEnvelope(null)
  @ApiResponse({ status: 503, description: 'SERVICE_UNAVAILABLE: the database does not answer', schema: ERROR_ENVELOPE_SCHEMA })
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.database.pingCheck('database', { timeout: 3000 })]);
  }
}
