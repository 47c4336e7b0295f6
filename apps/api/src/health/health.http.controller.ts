import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { API_VERSION, type AppConfig } from '@crs/config';
import { DirectResponse } from '../http/envelope.interceptor';
import { APP_CONFIG, DATA_SOURCE, PROJECTION_RUNNER } from '@crs/platform/tokens';
import type { DataSource } from 'typeorm';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { Metrics } from './metrics';
import { ApiDirectResponse, ApiErrorResponses, ApiRawResponse } from '../http/openapi';
import { HealthResponse, ProjectionCheck, ReadyResponse } from './health.response.dto';

@ApiTags('health')
@Controller()
@DirectResponse()
@ApiExtraModels(ProjectionCheck)
export class HealthController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(PROJECTION_RUNNER) private readonly runner: ProjectionRunner,
    private readonly metrics: Metrics,
  ) {}

  @Get('health')
  @ApiOperation({ summary: 'Liveness, with the serving API version' })
  @ApiDirectResponse(HealthResponse)
  @ApiErrorResponses([400, 'INVALID_INPUT: a request that is not valid HTTP (broken framing, a malformed percent-encoding)'])
  health() {
    return { status: 'ok', api_version: API_VERSION, version: API_VERSION };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: Postgres reachable and every projection within the configured lag' })
  @ApiDirectResponse(ReadyResponse, 200, 'Ready')
  @ApiDirectResponse(ReadyResponse, 503, 'Not ready: Postgres unreachable, or a projection lagging or failing')
  @ApiErrorResponses([400, 'INVALID_INPUT: a request that is not valid HTTP (broken framing, a malformed percent-encoding)'])
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const checks: Record<string, unknown> = {};
    let ok = true;
    try {
      await this.ds.query('SELECT 1');
      checks.postgres = 'ok';
    } catch (e) {
      ok = false;
      checks.postgres = `unreachable: ${(e as Error).message}`;
    }
    try {
      const status = await this.runner.status();
      checks.projections = status.map((s) => ({ name: s.name, position: s.position, lag: s.lag, error: s.error }));
      if (status.some((s) => s.lag > this.config.readinessMaxLag || s.error)) ok = false;
    } catch (e) {
      ok = false;
      checks.projections = `unavailable: ${(e as Error).message}`;
    }
    reply.status(ok ? 200 : 503);
    return { status: ok ? 'ready' : 'not_ready', api_version: API_VERSION, checks };
  }

  @Get('metrics')
  @ApiOperation({ summary: 'Prometheus metrics' })
  @ApiRawResponse('text/plain', { type: 'string' }, 'Prometheus text exposition format')
  @ApiErrorResponses(400, 401)
  async prometheus(@Res() reply: FastifyReply) {
    reply.header('content-type', this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
