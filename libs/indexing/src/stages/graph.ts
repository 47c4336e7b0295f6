import { lastPosition, type ItemDecision } from '@crs/eventstore/item-stream';
import type { StepClock } from '@crs/domain/step-clock';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { ProjectionRunner } from '@crs/persistence/projection-runner';
import { mapLimit } from '@crs/persistence/map-limit';
import { extractGraph } from '@crs/ingestion/graph/extract-graph';
import type { StatusRecorder } from './status';
import { active, IO_CONCURRENCY, type Work } from './work';

/** Recorded with every extraction, so a change of extractor is visible in the log. */
const GRAPH_EXTRACTOR = 'wink-lexicon-v2';

/** Graph extraction of a batch: its chunk lists read back, entities and relations recorded, the graph caught up. */
export class GraphExtraction {
  constructor(
    private readonly blobs: BlobStore,
    private readonly runner: ProjectionRunner,
    private readonly steps: StepClock,
    private readonly status: StatusRecorder,
  ) {}

  /** Reads back the chunk list each item's ItemChunked recorded. */
  async loadChunkLists(work: Work[]): Promise<void> {
    await mapLimit(active(work), IO_CONCURRENCY, async (w) => {
      try {
        if (!w.item.chunks_sha256) throw new Error('graph_creation without a chunk list');
        w.chunks = JSON.parse((await this.blobs.get(w.item.database_id, w.item.chunks_sha256)).toString('utf8'));
      } catch (err) {
        this.status.unexpected(w, err);
      }
    });
  }

  /**
   * Entities and relations into the context graph; the result is recorded (blob + GraphExtracted), never recomputed
   * on replay.
   */
  async graphAll(work: Work[]): Promise<void> {
    const decisions: ItemDecision[] = [];
    const started = process.hrtime.bigint();
    await mapLimit(active(work), IO_CONCURRENCY, async (w) => {
      try {
        const graph = extractGraph({ chunks: w.chunks!, appProvider: w.item.app_provider, appKind: w.item.app_kind, instructions: w.item.custom_instructions });
        const graphSha256 = await this.blobs.put(w.item.database_id, JSON.stringify(graph));
        const { item } = w;
        decisions.push({
          ...this.status.on(w),
          decide: (state) =>
            state.live && state.contentVersion === item.content_version && !state.graphed
              ? [{ type: 'GraphExtracted', data: { databaseId: item.database_id, itemKey: item.item_key, contentVersion: item.content_version, collection: item.collection, graphSha256, entityCount: graph.entities.length, relationCount: graph.relations.length, extractor: GRAPH_EXTRACTOR } }]
              : [],
        });
      } catch (err) {
        this.status.unexpected(w, err);
      }
    });
    this.steps.add('graph.extract', work.length, started);
    const graphedAt = lastPosition(await this.steps.timed('graph.record_graph', work.length, () => this.status.record(decisions)));
    // `completed` means the graph is queryable too.
    if (graphedAt !== null && !(await this.steps.timed('graph.wait_graph', work.length, () => this.runner.waitFor(graphedAt, ['graph'], 60_000)))) {
      throw new Error('the graph did not catch up in time');
    }
  }
}
