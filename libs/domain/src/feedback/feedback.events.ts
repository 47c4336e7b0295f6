/**
 * Feedback events. Each submission has its own stream (`feedback-<feedbackId>`, appended with "no stream"),
 * so a later submission for the same query never replaces an earlier one.
 */
export type FeedbackRating = 'positive' | 'negative' | 'neutral';
export type FeedbackSource = 'user' | 'agent';

export interface GroundTruth {
  /** expected answer; null when not sent (blank counts as not sent) */
  answer: string | null;
  /** ids of ingested items that contain the answer: deduplicated, blanks dropped, in the order sent */
  sourceIds: string[];
}

export interface FeedbackRecorded {
  type: 'FeedbackRecorded';
  data: {
    feedbackId: string;
    /** the target query's request id (lowercase UUID) */
    requestId: string;
    /** the database named by the submission (id and name at the time), or null */
    databaseId: string | null;
    databaseName: string | null;
    collection: string | null;
    feedback: string | null;
    /** null: a comment without a rating (not the same as neutral) */
    rating: FeedbackRating | null;
    source: FeedbackSource;
    groundTruth: GroundTruth | null;
    metadata: Record<string, string>;
    /**
     * Whether the request id named a recorded query the key could see when the feedback arrived, decided
     * once by the command (so a rebuild never re-decides it): the query's database when linked.
     */
    linked: boolean;
    queryDatabaseId: string | null;
  };
}

export type FeedbackEvent = FeedbackRecorded;
