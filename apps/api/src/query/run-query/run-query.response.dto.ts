import { ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { GraphEntity } from '../../context/graph/graph.response.dto';
import { VectorstoreStatusDto } from '../../databases/databases.response.dto';

export class ChunkScores {
  @ApiProperty() keyword!: number;
  @ApiProperty() vector!: number;
}

/** A ranked chunk in the original SDK's shape (`id` is the source item's id), plus its store and collection. */
export class QueryChunk {
  @ApiProperty({ description: 'The chunk id' }) chunk_uuid!: string;
  @ApiProperty({ description: 'The id of the item the chunk belongs to' }) id!: string;
  @ApiProperty() chunk_content!: string;
  @ApiProperty({ description: 'memory, file, app or app:<provider>' }) source_type!: string;
  @ApiProperty({ type: String, nullable: true }) source_title!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) source_upload_time!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) source_last_updated_time!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Always null' }) layout!: string | null;
  @ApiProperty() relevancy_score!: number;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata!: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true }) additional_metadata!: Record<string, unknown>;
  @ApiProperty({ type: [String], description: 'Thinking mode: chunks linked to this one (in additional_context)' }) extra_context_ids!: string[];
  @ApiProperty({ enum: ['memory', 'knowledge'] }) store!: 'memory' | 'knowledge';
  @ApiProperty({ enum: ['memory', 'knowledge'] }) type!: 'memory' | 'knowledge';
  @ApiProperty() collection!: string;
  @ApiProperty({ type: ChunkScores }) scores!: ChunkScores;
}

/** An item some returned chunk belongs to, once per item. */
export class QuerySource {
  @ApiProperty() id!: string;
  @ApiProperty({ type: String, nullable: true }) title!: string | null;
  @ApiProperty({ description: 'The source type: memory, file, app or app:<provider>' }) type!: string;
  @ApiProperty({ type: String, nullable: true, description: 'Always null' }) description!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'additional_metadata.url when it is a string' }) url!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) timestamp!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata!: Record<string, unknown>;
  @ApiProperty({ type: 'object', additionalProperties: true }) additional_metadata!: Record<string, unknown>;
  @ApiProperty({ type: String, nullable: true }) app_kind!: string | null;
  @ApiProperty({ type: String, nullable: true }) app_provider!: string | null;
  @ApiProperty({ type: String, nullable: true }) app_external_id!: string | null;
  @ApiProperty() collection!: string;
  @ApiProperty({ enum: ['memory', 'knowledge'] }) store!: 'memory' | 'knowledge';
}

export class GraphTriplet {
  @ApiProperty({ type: GraphEntity }) source!: GraphEntity;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The relation evidence' }) relation!: Record<string, unknown>;
  @ApiProperty({ type: GraphEntity }) target!: GraphEntity;
}

export class ScoredPath {
  @ApiProperty({ type: [GraphTriplet] }) triplets!: GraphTriplet[];
  @ApiProperty() relevancy_score!: number;
  @ApiProperty() combined_context!: string;
  @ApiProperty() group_id!: string;
  @ApiProperty({ type: [String] }) source_chunk_ids!: string[];
}

/** The graph around the query and the returned chunks (empty with graph_context: false). */
export class GraphContext {
  @ApiProperty({ type: [ScoredPath] }) query_paths!: ScoredPath[];
  @ApiProperty({ type: [ScoredPath] }) chunk_relations!: ScoredPath[];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: 'chunk id: the group_ids of its paths' })
  chunk_id_to_group_ids!: Record<string, string[]>;
  @ApiProperty({ type: String, nullable: true }) synthesis_context!: string | null;
}

/** POST /query: the ranked chunks, their sources and the graph context. */
export class QueryResponse {
  @ApiProperty({ type: [QueryChunk], description: 'Best first' }) chunks!: QueryChunk[];
  @ApiProperty({ type: [QuerySource] }) sources!: QuerySource[];
  @ApiProperty({ type: GraphContext }) graph_context!: GraphContext;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: getSchemaPath(QueryChunk) }, description: 'Thinking mode: linked chunks by chunk id' })
  additional_context!: Record<string, QueryChunk>;
  @ApiProperty({ type: VectorstoreStatusDto, description: 'Which stores were searched' }) vectorstore_status!: VectorstoreStatusDto;
}

/** POST /recall/full_recall and /recall/recall_preferences (legacy): the query's answer with success. */
export class RecallResponse extends QueryResponse {
  @ApiProperty({ type: Boolean, enum: [true] }) success!: true;
}
