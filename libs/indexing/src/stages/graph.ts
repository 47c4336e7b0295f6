import { lastPosition, type ItemDecision } from '@crs/eventstore/item-stream';
import type { BatchOutcome } from '@crs/eventstore/command-handling';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { StepClock } from '@crs/domain/step-clock';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { mapLimit } from '@crs/persistence/map-limit';
import { extractGraph } from '@crs/ingestion/graph/extract-graph';
import { parseChunkList } from '@crs/search/chunk-docs';
import type { StatusRecorder } from './status';
import { active, IO_CONCURRENCY, type Work } from './work';

/** Recorded with every extraction, so a change of extractor is visible in the log. */
const GRAPH_EXTRACTOR = 'wink-lexicon-v2';

/**
 * Graph extraction of a batch. The index stage records each item's graph once its chunks are in the search index
 * (GraphExtracted then stands for graph_creation: searchable); the graph stage waits until the graph read model has it.
 */
export class GraphExtraction {
  constructor(
    private readonly store: EventStore,
    private readonly blobs: BlobStore,
    private readonly runner: ProjectionRunner,
    private readonly steps: StepClock,
    private readonly status: StatusRecorder,
  ) {}

  /** Reads back the chunk list each item's ItemChunked recorded (items whose chunks this batch has not made). */
  async loadChunkLists(work: Work[]): Promise<void> {
    await mapLimit(active(work), IO_CONCURRENCY, async (w) => {
      try {
        if (!w.item.chunks_sha256) throw new Error('graph_creation without a chunk list');
        w.chunks = parseChunkList(await this.blobs.get(w.item.database_id, w.item.chunks_sha256));
      } catch (err) {
        this.status.unexpected(w, err);
      }
    });
  }

  /**
   * Entities and relations of each item's chunks, recorded (blob + GraphExtracted) and never recomputed on replay; an
   * item whose stream already has them appends nothing.
   */
  async recordGraphs(work: Work[]): Promise<BatchOutcome<unknown>[]> {
    const decisions: ItemDecision[] = [];
    const started = process.hrtime.bigint();
    const extracted: { w: Work; graph: ReturnType<typeof extractGraph> }[] = [];
    for (const w of active(work)) {
      try {
        extracted.push({ w, graph: extractGraph({ chunks: w.chunks!, appProvider: w.item.app_provider, appKind: w.item.app_kind, instructions: w.item.custom_instructions }) });
      } catch (err) {
        this.status.unexpected(w, err);
      }
    }
    // Every graph of the batch stored at once (the small ones in one statement).
    const stored = await this.blobs.putMany(extracted.map(({ w, graph }) => ({ databaseId: w.item.database_id, bytes: JSON.stringify(graph) })));
    extracted.forEach(({ w, graph }, i) => {
      const outcome = stored[i];
      if ('error' in outcome) return void this.status.unexpected(w, outcome.error);
      const { item } = w;
      const graphSha256 = outcome.sha256;
      decisions.push({
        ...this.status.on(w),
        decide: (state) =>
          state.live && state.contentVersion === item.content_version && !state.graphed
            ? [{ type: 'GraphExtracted', data: { databaseId: item.database_id, itemKey: item.item_key, contentVersion: item.content_version, collection: item.collection, graphSha256, entityCount: graph.entities.length, relationCount: graph.relations.length, extractor: GRAPH_EXTRACTOR } }]
            : [],
      });
    });
    this.steps.add('graph.extract', work.length, started);
    return this.steps.timed('graph.record_graph', work.length, () => this.status.record(decisions));
  }

  /**
   * Until the graph read model has every item's GraphExtracted (`completed` means the graph is queryable too): the
   * position this batch appended them at, or the head when one was recorded before (by the index stage, or an earlier
   * attempt).
   */
  async untilGraphed(recorded: BatchOutcome<unknown>[], work: Work[]): Promise<void> {
    const pending = active(work);
    if (!pending.length) return;
    const appendedAt = lastPosition(recorded);
    const all = appendedAt !== null && recorded.length === pending.length && recorded.every((o) => o.events?.length);
    const graphedAt = all ? appendedAt : await this.store.headPosition();
    if (!(await this.steps.timed('graph.wait_graph', work.length, () => this.runner.waitFor(graphedAt, ['graph'], 60_000)))) {
      throw new Error('the graph did not catch up in time');
    }
  }
}
