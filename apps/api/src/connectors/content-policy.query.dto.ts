import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CONTENT_POLICIES, type ContentPolicy } from '@crs/domain/connectors/connector.events';

/** `?content=delete|keep` of the connector and resource DELETE routes. */
export class ContentPolicyQuery {
  @ApiPropertyOptional({ enum: CONTENT_POLICIES, default: 'delete', description: 'delete: the synced documents are deleted with it; keep: they stay as ordinary items under their last ACL' })
  @IsOptional() @IsIn([...CONTENT_POLICIES], { message: "content must be 'delete' or 'keep'" }) content?: ContentPolicy;
}
