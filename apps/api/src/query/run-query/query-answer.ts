import type { RankedChunk } from '../retrieval.service';

export const round = (x: number) => Math.round(x * 1e6) / 1e6;
const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/** The chunk shape of the original SDK (`chunk_uuid`, `id` = source id, `chunk_content`, ...) plus our store and collection. */
export function toChunk(r: RankedChunk) {
  const { item, candidate } = r;
  return {
    chunk_uuid: candidate.chunkId,
    id: item.item_id,
    chunk_content: candidate.doc.text,
    source_type: item.source_type,
    source_title: item.title,
    source_upload_time: iso(item.created_at),
    source_last_updated_time: iso(item.updated_at),
    layout: null,
    relevancy_score: round(r.score),
    metadata: item.metadata,
    additional_metadata: item.additional_metadata,
    extra_context_ids: [] as string[],
    store: item.store,
    type: item.store,
    collection: item.collection,
    scores: { keyword: round(r.keyword), vector: round(r.vector) },
  };
}

export function sourcesOf(ranked: RankedChunk[]) {
  const seen = new Map<string, ReturnType<typeof source>>();
  for (const r of ranked) if (!seen.has(r.item.item_key)) seen.set(r.item.item_key, source(r));
  return [...seen.values()];
}

function source(r: RankedChunk) {
  const i = r.item;
  const add = i.additional_metadata ?? {};
  return {
    id: i.item_id,
    title: i.title,
    type: i.source_type,
    description: null,
    url: typeof add.url === 'string' ? add.url : null,
    timestamp: iso(i.updated_at),
    metadata: i.metadata,
    additional_metadata: add,
    app_kind: i.app_kind,
    app_provider: i.app_provider,
    app_external_id: i.kind === 'app' ? i.item_id : null,
    collection: i.collection,
    store: i.store,
  };
}
