import { ApiProperty } from '@nestjs/swagger';

/** An entity of the context graph as the original SDK shows it (also in /query's graph_context). */
export class GraphEntity {
  @ApiProperty() name!: string;
  @ApiProperty() type!: string;
  @ApiProperty({ description: 'The database id' }) namespace!: string;
  @ApiProperty() entity_id!: string;
  @ApiProperty() identifier!: string;
}

export class GraphRelationEvidence {
  @ApiProperty() canonical_predicate!: string;
  @ApiProperty() raw_predicate!: string;
  @ApiProperty({ type: String, nullable: true }) context!: string | null;
  @ApiProperty({ type: Number, nullable: true }) confidence!: number | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) temporal_details!: Record<string, unknown> | null;
  @ApiProperty({ type: String, nullable: true }) timestamp!: string | null;
  @ApiProperty() relationship_id!: string;
  @ApiProperty() chunk_id!: string;
  @ApiProperty() source_entity_id!: string;
  @ApiProperty() target_entity_id!: string;
}

export class RelationPair {
  @ApiProperty({ type: GraphEntity }) source!: GraphEntity;
  @ApiProperty({ type: GraphEntity }) target!: GraphEntity;
  @ApiProperty({ type: [GraphRelationEvidence] }) relations!: GraphRelationEvidence[];
  @ApiProperty() chunk_id!: string;
  @ApiProperty() item_id!: string;
}

/** GET /context/relations: one page of triplets. */
export class RelationsResponse {
  @ApiProperty({ type: Boolean, enum: [true] }) success!: true;
  @ApiProperty({ type: [RelationPair] }) relations!: RelationPair[];
  @ApiProperty() is_truncated!: boolean;
  @ApiProperty({ type: 'integer', nullable: true, description: 'cursor of the next page' }) next_cursor!: number | null;
  @ApiProperty() message!: string;
}

export class ItemEntity extends GraphEntity {
  @ApiProperty({ type: 'integer' }) mentions!: number;
}

/** GET /context/graph/entities. */
export class ItemEntitiesResponse {
  @ApiProperty() id!: string;
  @ApiProperty({ type: [ItemEntity] }) entities!: ItemEntity[];
}

export class NeighbourRelation {
  @ApiProperty() predicate!: string;
  @ApiProperty({ enum: ['out', 'in'] }) direction!: 'out' | 'in';
  @ApiProperty({ type: String, nullable: true }) context!: string | null;
  @ApiProperty() item_id!: string;
  @ApiProperty() chunk_id!: string;
}

export class Neighbour {
  @ApiProperty({ type: GraphEntity }) entity!: GraphEntity;
  @ApiProperty({ type: [NeighbourRelation] }) relations!: NeighbourRelation[];
}

/** GET /context/graph/neighbours. */
export class EntityNeighboursResponse {
  @ApiProperty({ description: 'The entity key' }) entity!: string;
  @ApiProperty({ type: [Neighbour] }) neighbours!: Neighbour[];
  @ApiProperty({ type: 'integer' }) count!: number;
}
