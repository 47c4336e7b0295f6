import { Module } from '@nestjs/common';
import { DatabasesModule } from '../databases/databases.module';
import { QueryController } from './run-query/run-query.http.controller';
import { RunQueryHandler } from './run-query/run-query.handler';
import { RetrievalService } from './retrieval.service';
import { ThinkingService } from './thinking.service';
import { GraphContextService } from './graph-context.service';

/** POST /query (and its original SDK aliases): fast and thinking retrieval. */
@Module({
  imports: [DatabasesModule],
  controllers: [QueryController],
  providers: [RunQueryHandler, RetrievalService, ThinkingService, GraphContextService],
})
export class QueryModule {}
