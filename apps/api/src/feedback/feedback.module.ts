import { Module } from '@nestjs/common';
import { DatabasesModule } from '../databases/databases.module';
import { SubmitFeedbackController } from './submit-feedback/submit-feedback.http.controller';
import { SubmitFeedbackHandler } from './submit-feedback/submit-feedback.handler';

/** Feedback about queries that already ran. Resolves the scoped database through the databases area's directory. */
@Module({
  imports: [DatabasesModule],
  controllers: [SubmitFeedbackController],
  providers: [SubmitFeedbackHandler],
})
export class FeedbackModule {}
