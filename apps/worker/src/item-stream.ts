import type { EventStore } from '../../../libs/eventstore/src/event-store.port';
import { handleCommand, type CommandContext } from '../../../libs/eventstore/src/command-handling';
import { evolveItem, initialItem, type ItemState } from '../../../libs/domain/src/items/item.decider';
import type { ItemEvent } from '../../../libs/domain/src/items/item.events';
import { streams } from '../../../libs/domain/src/streams';

/** Decides on one item's stream with an expected revision; returns the appended position (null when nothing was decided). */
export async function decideOnItem(store: EventStore, ctx: CommandContext, databaseId: string, itemKey: string, decide: (state: ItemState) => ItemEvent[]): Promise<number | null> {
  const out = await handleCommand<ItemState, ItemEvent & { revision?: number }, null>(
    store,
    streams.item(databaseId, itemKey),
    { initial: initialItem, evolve: evolveItem },
    (_c, state) => decide(state),
    null,
    { ...ctx, databaseId },
  );
  return out.position;
}
