import type { DataSource } from 'typeorm';
import type { EventStore } from '@crs/eventstore/event-store.port';
import type { CommandContext } from '@crs/eventstore/command-handling';
import { decideOnItem } from '@crs/eventstore/item-stream';
import { itemKey } from '@crs/domain/items/item-input';
import type { ItemIngested } from '@crs/domain/items/item.events';
import type { BlobStore } from '@crs/persistence/blob-store';
import type { Inference } from '@crs/ingestion/inference/inference.port';
import { memoriesDerivedFromExcept } from '@crs/projections/items/items.queries';
import type { StatusRecorder } from './status';
import { active, type PipelineItem, type Work } from './work';

/**
 * Memory inference for `infer` items, between GraphExtracted and completed. `wake` is called when derived memories
 * were appended, so the pipeline claims them without waiting for its next poll.
 */
export class MemoryInference {
  constructor(
    private readonly ds: DataSource,
    private readonly store: EventStore,
    private readonly blobs: BlobStore,
    private readonly inference: Inference,
    private readonly status: StatusRecorder,
    private readonly wake: () => void,
  ) {}

  /** Inference (rare, possibly a remote model) goes item by item. */
  async inferAll(work: Work[]): Promise<void> {
    for (const w of active(work).filter((x) => x.item.infer)) {
      try {
        await this.infer(w.ctx, w.item);
      } catch (err) {
        this.status.unexpected(w, err);
      }
    }
  }

  /**
   * Memory inference: facts extracted from the input become derived memories (items of their own, linked to the
   * source by `derived_from`), appended before InferenceCompleted so a redo after a crash completes the set; an
   * unchanged derived memory is not appended again, and ones no longer produced are deleted.
   */
  private async infer(ctx: CommandContext, item: PipelineItem): Promise<void> {
    const raw = (await this.blobs.get(item.database_id, item.content_sha256)).toString('utf8');
    const facts = await this.inference.extract({
      ...(item.pairs ? { pairs: JSON.parse(raw) } : { text: raw }),
      userName: item.user_name,
      customInstructions: item.custom_instructions,
    });
    const factsSha256 = await this.blobs.put(item.database_id, JSON.stringify(facts));
    const derivedIds = facts.map((_, i) => `${item.item_id}::inferred:${i}`);
    let last: number | null = null;
    for (const [i, fact] of facts.entries()) {
      const id = derivedIds[i];
      const key = itemKey(item.collection, 'memory', id);
      const sha256 = await this.blobs.put(item.database_id, fact.text);
      const event: ItemIngested = {
        type: 'ItemIngested',
        data: {
          databaseId: item.database_id, itemKey: key, collection: item.collection, store: 'memory', itemId: id, kind: 'inferred', title: null,
          content: { sha256, bytes: Buffer.byteLength(fact.text), contentType: 'text/plain' }, pairs: false, isMarkdown: false, infer: false,
          customInstructions: null, userName: item.user_name, expiresAt: item.expires_at ? new Date(item.expires_at).toISOString() : null, metadata: item.metadata,
          additionalMetadata: { derived_from: item.item_id, inferred_kind: fact.kind, inference_model: this.inference.modelId }, relations: [item.item_id],
          // A synced source's access is decided when read (items.queries.ts `itemAccess`), and its inferred memories
          // follow it there: a copy of an ACL taken now would go stale.
          ...(item.acl && !item.connector_id ? { acl: item.acl } : {}), sourceType: 'inferred_memory',
        },
      };
      last = (await decideOnItem(this.store, ctx, item.database_id, key, (state) => (state.live && state.contentSha === sha256 ? [] : [event]))) ?? last;
    }
    const stale = await memoriesDerivedFromExcept(this.ds, item.database_id, item.collection, item.item_id, derivedIds);
    for (const s of stale) {
      const ids = { databaseId: item.database_id, itemKey: s.item_key, itemId: s.item_id, collection: item.collection, store: 'memory' as const };
      await decideOnItem(this.store, ctx, item.database_id, s.item_key, (state) => (state.live ? [{ type: 'ItemDeleted', data: ids }] : []));
    }
    await decideOnItem(this.store, ctx, item.database_id, item.item_key, (state) =>
      state.live && state.contentVersion === item.content_version && !state.inferred
        ? [{ type: 'InferenceCompleted', data: { databaseId: item.database_id, itemKey: item.item_key, contentVersion: item.content_version, factsSha256, derivedIds, model: this.inference.modelId } }]
        : [],
    );
    if (last !== null) this.wake();
  }
}
