import type { EventStore } from './event-store.port';
import { handleCommand, handleMany, type BatchOutcome, type CommandContext, type Fold, type StreamStateCache } from './command-handling';
import { evolveItem, initialItem, type ItemState } from '@crs/domain/items/item.decider';
import type { ItemEvent } from '@crs/domain/items/item.events';
import { streams } from '@crs/domain/streams';

const ITEM_FOLD: Fold<ItemState> = { initial: initialItem, evolve: evolveItem };

/** Decides on one item's stream with an expected revision; returns the appended position (null when nothing was decided). */
export async function decideOnItem(store: EventStore, ctx: CommandContext, databaseId: string, itemKey: string, decide: (state: ItemState) => ItemEvent[]): Promise<number | null> {
  const out = await handleCommand<ItemState, ItemEvent, null>(store, streams.item(databaseId, itemKey), ITEM_FOLD, (_c, state) => decide(state), null, { ...ctx, databaseId });
  return out.position;
}

export interface ItemDecision {
  ctx: CommandContext;
  databaseId: string;
  itemKey: string;
  decide: (state: ItemState) => ItemEvent[];
}

export type ItemStateCache = StreamStateCache<ItemState>;

/**
 * Decides on many item streams (of any databases) with one read and one atomic append; outcomes in order. With a
 * cache (see loadItemStates), streams it knows are not read again.
 */
export function decideOnItems(store: EventStore, decisions: ItemDecision[], cache?: ItemStateCache): Promise<BatchOutcome<ItemEvent>[]> {
  if (decisions.length === 0) return Promise.resolve([]);
  return handleMany<ItemState, ItemEvent>(
    store,
    ITEM_FOLD,
    decisions.map((d) => ({ stream: streams.item(d.databaseId, d.itemKey), ctx: { ...d.ctx, databaseId: d.databaseId }, decide: d.decide })),
    cache,
  );
}

/**
 * Current state of many items, folded from their streams (the truth, where a read model may lag). Given a cache,
 * also records each stream's state and revision there, for the decisions that follow.
 */
export async function loadItemStates(store: EventStore, items: { databaseId: string; itemKey: string }[], cache?: ItemStateCache): Promise<Map<string, ItemState>> {
  const names = items.map((i) => streams.item(i.databaseId, i.itemKey));
  const histories = await store.readStreams(names);
  return new Map(
    names.map((n) => {
      const history = histories.get(n) ?? [];
      const state = history.reduce((s, e) => evolveItem(s, e), initialItem());
      cache?.set(n, { state, revision: history.length ? history[history.length - 1].revision : -1 });
      return [n, state];
    }),
  );
}

/** The highest appended position among outcomes (null when none appended). */
export function lastPosition(outcomes: BatchOutcome<unknown>[]): number | null {
  let last: number | null = null;
  for (const o of outcomes) if (o.position != null && (last === null || o.position > last)) last = o.position;
  return last;
}
