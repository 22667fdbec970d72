import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { SkipRateLimit } from '../../common/rate-limit/rate-limit.guard.js';
import { Public } from '../../common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../common/http/api-envelope.decorator.js';

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
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: the database answers' })
  @ApiEnvelope(null)
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.database.pingCheck('database', { timeout: 3000 })]);
  }
}
