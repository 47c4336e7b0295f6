import { Controller, Get, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { authOf } from '../../http/auth.hook';
import { DirectResponse } from '../../http/envelope.interceptor';
import { parseListQuery, WebhookReads } from '../webhook-reads';

@ApiTags('webhooks')
@Controller()
export class ListDeliveriesController {
  constructor(private readonly reads: WebhookReads) {}

  @Get('webhooks/indexing/deliveries')
  @DirectResponse()
  @ApiOperation({ summary: 'Delivery records, newest first' })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } })
  @ApiQuery({ name: 'status', required: false, enum: ['pending', 'sweeping', 'delivered', 'failed', 'permanently_failed'] })
  @ApiQuery({ name: 'cursor', required: false, description: 'next_cursor of the previous page' })
  async list(@Req() req: FastifyRequest, @Query() query: Record<string, unknown>) {
    const auth = authOf(req);
    return this.reads.list(auth.orgId, auth, parseListQuery(query ?? {}));
  }
}
