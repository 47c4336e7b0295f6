import { Module } from '@nestjs/common';
import { DatabasesModule } from '../databases/databases.module';
import { QueryController } from './query.http.controller';
import { QueryService } from './query.service';
import { RetrievalService } from './retrieval.service';
import { ThinkingService } from './thinking.service';
import { GraphContextService } from './graph-context.service';

/** POST /query (and its original SDK aliases): fast and thinking retrieval. */
@Module({
  imports: [DatabasesModule],
  controllers: [QueryController],
  providers: [QueryService, RetrievalService, ThinkingService, GraphContextService],
})
export class QueryModule {}
