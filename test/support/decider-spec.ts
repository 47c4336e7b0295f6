/**
 * Decider specs read as given / when / then:
 *
 *   const given = deciderSpec({ decide: decideItem, evolve: evolveItem, initialState: initialItem });
 *   given([ingested]).when({ type: 'Delete', ids }).then([{ type: 'ItemDeleted', data: ids }]);
 *   given([]).when({ type: 'Delete', ids }).thenThrows('ITEM_NOT_FOUND');
 *
 * The given events are folded with the decider's own `evolve` from its initial state, so a spec states a stream's
 * history as events, the way the log holds it, never as a hand-built state.
 */
export interface Decider<Command, Event, State> {
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
  initialState(): State;
}

export interface DeciderWhen<Event> {
  /** The command is accepted and decides exactly these events, in this order. */
  then(expected: Event[]): void;
  /** The command is accepted and changes nothing (an idempotent repeat, a no-op). */
  thenNothing(): void;
  /** The command is refused with a domain error of this code (and of this kind, when given). */
  thenThrows(code: string, kind?: string): void;
}

export function deciderSpec<Command, Event, State>(decider: Decider<Command, Event, State>) {
  return (given: Event[]) => ({
    when(command: Command): DeciderWhen<Event> {
      const run = () => decider.decide(command, given.reduce(decider.evolve, decider.initialState()));
      const then = (expected: Event[]) => expect(run()).toStrictEqual(expected);
      return {
        then,
        thenNothing: () => then([]),
        thenThrows(code, kind) {
          let decided: Event[];
          try {
            decided = run();
          } catch (error) {
            expect(error).toMatchObject(kind === undefined ? { code } : { code, kind });
            return;
          }
          throw new Error(`expected the command to be refused with ${code}, but it decided ${JSON.stringify(decided)}`);
        },
      };
    },
  });
}
